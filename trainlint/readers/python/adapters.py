"""`LoraConfig(...)` in an entry script: its rank (`r=`) and the modules peft trains as full copies next to the
adapters (`modules_to_save=`). A keyword is read when it is a literal, a parsed argument, or a local variable
that one assignment sets, or that each arm of one `if` over parsed arguments sets (Qwen's and Qwen-VL's
`finetune.py`: `["wte", "lm_head"]` unless `q_lora` or a chat model). Whatever else decides it is Unknown.
A call under branches carries them (`Keyword.gates`): its values count when the launch takes every branch, and a
branch that only runs when LoRA is on (`if training_args.use_lora:`) does not make a value conditional: the value
only matters when LoRA is on."""

from __future__ import annotations

from dataclasses import replace
from typing import List, Optional, Sequence, Tuple

import libcst as cst

from trainlint.core import Setting, SourceKind, Unknown, Value
from trainlint.knobs import K, knob_for
from trainlint.readers.facts import ADAPTER_KEYWORDS, LORA_CONFIG, Keyword, Override
from trainlint.readers.python.context import Assignment, Branch, describe_binding
from trainlint.readers.python.expressions import CstExpr, NotLiteral, keyword_args, literal_value
from trainlint.readers.python.findings import Findings
from trainlint.readers.python.gates import GateReader, negate
from trainlint.readers.python.values import ValueReader

# List methods that only add entries: the entries written in the literal stay in the list.
_ADDING_METHODS = frozenset({"append", "extend", "insert"})


def names_list(node: CstExpr) -> Optional[str]:
    """A list or tuple of string literals as the comma-separated names it holds, else None."""
    if not isinstance(node, (cst.List, cst.Tuple)):
        return None
    names = []
    for element in node.elements:
        value = literal_value(element.value) if isinstance(element, cst.Element) else None
        if not isinstance(value, str):
            return None
        names.append(value)
    return ",".join(names)


class AdapterReader:
    """Appends what a `LoraConfig(...)` call pins to the file's findings."""

    def __init__(self, values: ValueReader, findings: Findings):
        self.values = values
        self.ctx = values.ctx
        self.findings = findings
        self._scope: cst.CSTNode = values.ctx.module  # the function of the call being read
        self.gates = GateReader(values)

    def lora_config(self, node: cst.Call) -> None:
        """Its keywords, each with the branches around the call: a config built under a branch the launch skips
        (`if model_args.lora_enabled:` with LoRA off) is never built."""
        first = len(self.findings.other_keywords)
        self._lora_config(node)
        gates = self.gates.around(node)
        found = self.findings.other_keywords
        found[first:] = [(callee, replace(keyword, gates=gates)) for callee, keyword in found[first:]]

    def _lora_config(self, node: cst.Call) -> None:
        ctx = self.ctx
        for name, arg in keyword_args(node).items():
            if name not in ADAPTER_KEYWORDS:
                continue
            note = f"{LORA_CONFIG}({name}=...)"
            # Under branches (which of several configurations runs), the value counts when the launch takes them
            # all: the resolution tells from the gates.
            if isinstance(arg.value, cst.Name) and isinstance(literal_value(arg.value), NotLiteral) \
                    and self.values.argument_reference(arg.value) is None:  # `r=lora_r` of a fire function reads it
                self._local(name, arg.value, ctx.scope_of(node), note)
            else:
                self.findings.other_keywords.append((LORA_CONFIG, self._keyword(name, arg.value, note)))

    # ------------------------------------------------ values
    def _keyword(self, name: str, value: CstExpr, note: str, at_least: bool = False) -> Keyword:
        written = names_list(value)
        if written is None:
            return self.values.keyword(name, value, SourceKind.CODE_KEYWORD, note, written_as=name)
        if at_least:
            note += " (entries added later in code are not counted)"
        return Keyword(name, Setting(written, SourceKind.CODE_KEYWORD, self.ctx.origin(value), self.ctx.text(value),
                                     note=note, written_as=name))

    def _unknown(self, name: str, node: cst.CSTNode, reason: str, note: str) -> None:
        setting = Setting(Unknown(reason), SourceKind.CODE_KEYWORD, self.ctx.origin(node), self.ctx.text(node),
                          note=note, written_as=name)
        self.findings.other_keywords.append((LORA_CONFIG, Keyword(name, setting)))

    def _local(self, name: str, variable: cst.Name, scope: cst.CSTNode, note: str) -> None:
        """`modules_to_save=modules_to_save`: the value the local variable holds at the call."""
        ctx = self.ctx
        bindings = [b for b in ctx.assignments(scope, variable.value) if b.value is not None]
        every = ctx.assignments(scope, variable.value)
        described = ", ".join(describe_binding(ctx, b) for b in every) or "nowhere in this function"
        reason = f"`{variable.value}` is assigned {described}"
        if len(bindings) != len(every) or not bindings:
            self._unknown(name, variable, reason, note)
            return
        self._scope = scope
        mutations = self._mutations(scope, variable.value)
        if mutations - _ADDING_METHODS:
            self._unknown(name, variable, f"{reason} and changed by `.{sorted(mutations)[0]}()`", note)
            return
        if len(bindings) == 1 and not self._branches(bindings[0].statement, bound=True):
            keyword = self._keyword(name, bindings[0].value, note, at_least=bool(mutations))
            self.findings.other_keywords.append((LORA_CONFIG, keyword))
            return
        chosen = self._choice(bindings) if not mutations else None
        if chosen is None:
            self._unknown(name, variable, reason + " depending on the branch taken", note)
            return
        terms, any_of = chosen
        for binding in bindings:
            in_body = self._branches(binding.statement, bound=True)[0].in_body
            value = self._keyword(name, binding.value, note).setting
            tests = terms if in_body else tuple(negate(term) for term in terms)
            # `not (a or b)` holds when all of `not a`, `not b` do; `not (a and b)` when any does.
            self.findings.overrides.append(Override(
                ADAPTER_KEYWORDS[name], value, LORA_CONFIG, tests=tests, tests_any=any_of if in_body else not any_of))

    def _choice(self, bindings: Sequence[Assignment]) -> Optional[Tuple[Tuple[Keyword, ...], bool]]:
        """The one `if` whose body sets one value and whose `else` sets the other, with its test read as
        argument tests (and whether any one of them decides, `or`), or None."""
        if len(bindings) != 2:
            return None
        branches = [self._branches(b.statement, bound=True) for b in bindings]
        if any(len(found) != 1 for found in branches):
            return None
        first, second = branches[0][0], branches[1][0]
        if first.test is None or first.test is not second.test or first.in_body == second.in_body:
            return None
        read = self._terms(first.test)
        if read is None:
            return None
        return read

    # ------------------------------------------------ branch tests
    def _branches(self, node: cst.CSTNode, bound: bool = False) -> List[Branch]:
        """The branches around `node` that can change a value, leaving out those that run only with LoRA on."""
        return [branch for branch in self.ctx.conditions(node, bound) if not self._lora_switch(branch)]

    def _lora_switch(self, branch: Branch) -> bool:
        test = branch.test
        return (branch.in_body and isinstance(test, cst.Attribute) and isinstance(test.value, cst.Name)
                and self.values.is_args_name(test.value.value) and knob_for(test.attr.value) == K.LORA)

    def _terms(self, test: CstExpr, depth: int = 0) -> Optional[Tuple[Tuple[Keyword, ...], bool]]:
        """A test as argument tests joined by one operator: (tests, joined by `or`)."""
        if isinstance(test, cst.BooleanOperation):
            operator = type(test.operator)
            parts: List[Keyword] = []
            for side in (test.left, test.right):
                if isinstance(side, cst.BooleanOperation) and not isinstance(side.operator, operator):
                    return None
                read = self._terms(side, depth)
                if read is None:
                    return None
                parts.extend(read[0])
            return tuple(parts), isinstance(test.operator, cst.Or)
        term = self._term(test, depth)
        return ((term,), True) if term is not None else None

    def _term(self, test: CstExpr, depth: int) -> Optional[Keyword]:
        ctx = self.ctx
        origin, text = ctx.origin(test), ctx.text(test)
        if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
            inner = self._term(test.expression, depth)
            return negate(inner) if inner is not None else None
        reference = self.values.argument_reference(test)
        if reference is not None:
            return Keyword(reference, Setting(True, SourceKind.CODE_KEYWORD, origin, text), reference)
        if isinstance(test, cst.Comparison) and len(test.comparisons) == 1:
            return self._substring(test, origin, text)
        if isinstance(test, cst.Name) and depth == 0:
            # `is_chat_model = "chat" in model_args.model_name_or_path.lower()`, tested by name.
            bindings = ctx.assignments(self._scope, test.value)
            if len(bindings) == 1 and bindings[0].value is not None and not self._branches(bindings[0].statement, True):
                read = self._terms(bindings[0].value, depth + 1)
                if read is not None and len(read[0]) == 1:
                    return read[0][0]
        return None

    def _substring(self, test: cst.Comparison, origin, text: str) -> Optional[Keyword]:
        """`"chat" in model_args.model_name_or_path.lower()` (or `not in`): a case-insensitive test."""
        comparison = test.comparisons[0]
        if not isinstance(comparison.operator, (cst.In, cst.NotIn)):
            return None
        word: Value = literal_value(test.left)
        target = comparison.comparator
        if not isinstance(word, str) or not isinstance(target, cst.Call) or target.args:
            return None
        if not (isinstance(target.func, cst.Attribute) and target.func.attr.value == "lower"):
            return None
        reference = self.values.argument_reference(target.func.value)
        if reference is None:
            return None
        return Keyword(reference, Setting(word.lower(), SourceKind.CODE_KEYWORD, origin, text), reference,
                       negated=isinstance(comparison.operator, cst.NotIn))

    def _mutations(self, scope: cst.CSTNode, variable: str) -> frozenset:
        """Methods called on the variable in the scope (`modules_to_save.append("vpm")`)."""
        found = set()

        class _Calls(cst.CSTVisitor):
            def visit_Call(self, node: cst.Call) -> None:
                func = node.func
                if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) \
                        and func.value.value == variable:
                    found.add(func.attr.value)

        scope.visit(_Calls())
        return frozenset(found)

