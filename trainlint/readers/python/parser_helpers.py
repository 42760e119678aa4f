"""Functions a script hands its argument parser to (`add_encoder_params(parser)`, `add_model_args(parser)`): they
may add arguments of their own, so the parser's options are known only once those functions are read. And the
functions it hands the parsed arguments to (`create_and_prepare_model(model_args, data_args, training_args)`):
they may build the model from them (`BitsAndBytesConfig(load_in_4bit=args.use_4bit_quantization)`)."""
from __future__ import annotations

import ast
from typing import FrozenSet, Optional, Set, Tuple

from trainlint.readers.python.tree_nodes import TreeNodes, last_name

# Calls on a parser that add no option (or whose options the reader models itself).
_PARSER_METHODS = frozenset({"add_argument", "add_argument_group", "add_mutually_exclusive_group", "parse_args",
                             "parse_known_args", "parse_args_into_dataclasses", "set_defaults", "print_help",
                             "error", "exit", "add_subparsers"})
# Functions that take a parser and add no option trainlint does not model (DeepSpeed's are read as such).
_NOT_HELPERS = frozenset({"add_config_arguments", "print", "str", "repr", "vars", "id", "len", "isinstance"})


def parser_helpers(nodes: Optional[TreeNodes]) -> Tuple[str, ...]:
    """The names of the functions called with a parser as an argument: a name on which the module calls
    `add_argument` or `parse_args`/`parse_known_args`. `nodes`: the module's stdlib tree by kind."""
    if nodes is None:
        return ()
    parsers: Set[str] = set()
    for node in nodes.calls:
        if isinstance(node.func, ast.Attribute) and node.func.attr in _PARSER_METHODS \
                and isinstance(node.func.value, ast.Name):
            parsers.add(node.func.value.id)
    if not parsers:
        return ()
    found = []
    for node in nodes.calls:
        handed = any(isinstance(arg, ast.Name) and arg.id in parsers for arg in node.args) or any(
            isinstance(keyword.value, ast.Name) and keyword.value.id in parsers for keyword in node.keywords)
        name = last_name(node.func)
        if handed and name is not None and name not in _NOT_HELPERS and name not in _PARSER_METHODS:
            found.append(name)
    return tuple(dict.fromkeys(found))


def namespace_helpers(nodes: Optional[TreeNodes], namespaces: FrozenSet[str]) -> Tuple[str, ...]:
    """The names of the functions (snake_case, by convention) called by a bare name with a parsed namespace as an
    argument (`namespaces`: the names parse calls bind). `nodes`: the module's stdlib tree by kind."""
    if nodes is None or not namespaces:
        return ()
    found = []
    for node in nodes.calls:
        if not isinstance(node.func, ast.Name) or node.func.id in _NOT_HELPERS or node.func.id[:1].isupper():
            continue  # a class built from the arguments (`BertForQuestionAnswering(config, args)`) is model code
        values = (*node.args, *(keyword.value for keyword in node.keywords))
        if any(isinstance(value, ast.Name) and value.id in namespaces for value in values):
            found.append(node.func.id)
    return tuple(dict.fromkeys(found))


def builds_parser(nodes: Optional[TreeNodes]) -> bool:
    """Whether the module builds an argparse parser: calls `ArgumentParser(...)` or a class it defines on one
    (`class Parser(argparse.ArgumentParser)`). Without the tree, it may."""
    if nodes is None:
        return True
    constructors = {"ArgumentParser"} | {node.name for node in nodes.classes
                                         if any(last_name(base) == "ArgumentParser" for base in node.bases)}
    return any(last_name(node.func) in constructors for node in nodes.calls)


def refuses_abbreviations(nodes: Optional[TreeNodes]) -> bool:
    """Whether the module builds a parser with `allow_abbrev=False`: argparse then takes no prefix of an option
    (Megatron's), where by default a unique prefix (`--per_device_train`) names the whole option."""
    if nodes is None:
        return False
    return any("ArgumentParser" in (last_name(node.func) or "")
               and any(keyword.arg == "allow_abbrev" and isinstance(keyword.value, ast.Constant)
                       and keyword.value.value is False for keyword in node.keywords)
               for node in nodes.calls)
