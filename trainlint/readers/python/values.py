"""Settings from expressions: a constant, a reference to a parsed argument, or an opaque expression."""

from __future__ import annotations

import re
from typing import FrozenSet, Optional, Tuple

import libcst as cst

from trainlint.core import Setting, SourceKind, Unknown, Value
from trainlint.knobs import knob_for
from trainlint.readers.facts import ADAPTER_KEYWORDS, Keyword
from trainlint.readers.python.context import Context, describe_binding
from trainlint.readers.python.expressions import CstExpr, NotLiteral, dotted_name, literal_value

# Names that hold parsed arguments by convention, even when the parse happens elsewhere.
CONVENTIONAL_ARGS_NAME = re.compile(r"^(args|opt|opts|hparams|\w+_args|\w+_arguments)$")
TORCH_DTYPES = frozenset({"float16", "half", "bfloat16", "float32", "float", "float64", "double"})
# Names followed to the value they are bound to (`A = B`, `B = 4`): a few hops, never a cycle.
_MAX_NAME_HOPS = 3
_COMPREHENSIONS = (cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp)


class ValueReader:
    """Turns the expressions of one file into Settings, knowing which names hold parsed arguments."""

    def __init__(self, ctx: Context):
        self.ctx = ctx

    def keyword(self, name: str, value: CstExpr, kind: SourceKind, note: str,
                written_as: Optional[str] = None, depth: int = 0) -> Keyword:
        """A keyword value: a constant, a reference to a parsed argument, a name bound once to one of those, or an
        opaque expression; `written_as` is the keyword as the code spells it, when it is one."""
        ctx = self.ctx
        origin, text = ctx.origin(value), ctx.text(value)
        literal = literal_value(value)
        if not isinstance(literal, NotLiteral):
            return Keyword(name, Setting(literal, kind, origin, text, note=note, written_as=written_as))
        dotted = dotted_name(value)
        if (
            dotted is not None
            and dotted.startswith("torch.")
            and dotted.split(".")[-1] in TORCH_DTYPES
            and dotted.count(".") == 1
        ):
            return Keyword(name, Setting(dotted, kind, origin, text, note=note, written_as=written_as))
        if isinstance(value, cst.Name) and depth < _MAX_NAME_HOPS and names_a_knob(name):
            bound = self.bound_value(value)
            if bound is not None:
                # `per_device_train_batch_size=MICRO_BATCH_SIZE` with `MICRO_BATCH_SIZE = 4` (or `= args.micro_batch`)
                # once, unconditionally: the value where it is written.
                return self.keyword(name, bound, kind, f"{note} (`{value.value}`)", written_as, depth + 1)
        compared = self._compared_argument(value)
        if compared is not None:
            # `load_in_4bit=args.bits == 4`: true when the argument equals the constant.
            reference, constant, unequal = compared
            unknown = Setting(Unknown(f"from {ctx.short(value)}"), kind, origin, text, note=note, written_as=written_as)
            return Keyword(name, unknown, reference, unequal, exact=True, compared_with=constant)
        negated = False
        inner = value
        if isinstance(value, cst.UnaryOperation) and isinstance(value.operator, cst.Not):
            negated, inner = True, value.expression
        reference = self.argument_reference(inner)
        if reference is not None:
            reason = f"from {'not ' if negated else ''}{dotted_name(inner)}"
            unknown = Setting(Unknown(reason), kind, origin, text, note=note, written_as=written_as)
            return Keyword(name, unknown, reference, negated)
        # Only a keyword naming a knob: the narrowing keeps every rebinding of the name it reads (narrowing.py).
        parameter = self.function_parameter(value) if names_a_knob(name) else None
        if parameter is not None:
            reason = f"the parameter `{parameter[1]}` of `{parameter[0]}()`, which its caller sets"
            unknown = Setting(Unknown(reason), kind, origin, text, note=note, written_as=written_as)
            return Keyword(name, unknown, parameter=parameter)
        opaque = Unknown(f"expression `{ctx.short(value)}`")
        return Keyword(name, Setting(opaque, kind, origin, text, note=note, written_as=written_as))

    def _compared_argument(self, value: CstExpr) -> Optional[Tuple[str, Value, bool]]:
        """`args.bits == 4` (or `!=`, either side): (the argument, the constant, whether unequal), else None."""
        if not (isinstance(value, cst.Comparison) and len(value.comparisons) == 1
                and isinstance(value.comparisons[0].operator, (cst.Equal, cst.NotEqual))):
            return None
        unequal = isinstance(value.comparisons[0].operator, cst.NotEqual)
        for argument, constant in ((value.left, value.comparisons[0].comparator),
                                   (value.comparisons[0].comparator, value.left)):
            literal = literal_value(constant)
            reference = self.argument_reference(argument) if isinstance(literal, (str, int, float)) else None
            if reference is not None:
                return reference, literal, unequal
        return None

    def bound_value(self, node: cst.Name) -> Optional[CstExpr]:
        """The one value a bare name holds where it is read: the single assignment of the nearest scope that binds
        it (its function, an enclosing function, else the module), when that assignment is outside every branch
        and loop. None when a function or lambda takes the name as a parameter, a class body or comprehension may
        bind it, or it is bound otherwise, more than once, or nowhere the file shows (an import)."""
        ctx = self.ctx
        for scope in [*ctx.enclosing(node), ctx.module]:
            if isinstance(scope, (cst.Lambda, cst.ClassDef, *_COMPREHENSIONS)):
                return None  # scopes the assignment tables do not hold
            if isinstance(scope, cst.FunctionDef) and node.value in parameter_names(scope.params):
                return None
            if not isinstance(scope, (cst.FunctionDef, cst.Module)):
                continue
            bindings = ctx.assignments(scope, node.value)
            if bindings:
                return bindings[0].value if len(bindings) == 1 and not bindings[0].conditional else None
        return None

    def argument_reference(self, node: CstExpr) -> Optional[str]:
        """`args.eval_iters` -> "eval_iters" when `args` holds parsed arguments; `micro_batch_size` -> itself when
        it is a parameter of a python-fire function that the function never rebinds."""
        if isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name) and self.is_args_name(node.value.value):
            return node.attr.value
        if isinstance(node, cst.Name) and self.ctx.command_functions:
            return self._command_parameter(node)
        return None

    def _command_parameter(self, node: cst.Name) -> Optional[str]:
        """The parameter of a command function a bare name reads, from that function or one nested in it."""
        ctx = self.ctx
        function = self._parameter_owner(node)
        command = function is not None and function.name.value in ctx.command_functions
        return node.value if command else None

    def function_parameter(self, node: CstExpr) -> Optional[Tuple[str, str]]:
        """(function, parameter) for a bare name reading a parameter of a module-level function (not a command
        function, whose parameters are the command line's), from that function or one nested in it."""
        if not isinstance(node, cst.Name):
            return None
        function = self._parameter_owner(node)
        if function is None or function.name.value in self.ctx.command_functions:
            return None
        return function.name.value, node.value

    def _parameter_owner(self, node: cst.Name) -> Optional[cst.FunctionDef]:
        """The module-level function whose parameter a bare name reads, when that function never rebinds it."""
        ctx = self.ctx
        for scope in ctx.enclosing(node):
            if isinstance(scope, (cst.Lambda, cst.ClassDef, *_COMPREHENSIONS)):
                if isinstance(scope, cst.Lambda) and node.value in parameter_names(scope.params):
                    return None
                continue  # a class body or comprehension binding the name is rare; its function decides
            if not isinstance(scope, cst.FunctionDef):
                continue
            if node.value in parameter_names(scope.params):
                top_level = ctx.functions.get(scope.name.value) is scope
                return scope if top_level and not ctx.assignments(scope, node.value) else None
            if ctx.assignments(scope, node.value):
                return None  # a local of a nested function
        return None

    def is_args_name(self, name: str) -> bool:
        return name in self.ctx.args_names or bool(CONVENTIONAL_ARGS_NAME.match(name))

    def optional_value(self, value: CstExpr, kind: SourceKind, note: str) -> Setting:
        """A dataset-like value: literal None, a local variable that is only ever None, or opaque."""
        ctx = self.ctx
        literal = literal_value(value)
        if literal is None:
            return Setting(None, kind, ctx.origin(value), ctx.text(value), note=note)
        if isinstance(value, cst.Name) and isinstance(literal, NotLiteral):
            resolved = self.resolve_in_scope(value, ctx.scope_of(value), note)
            if resolved is not None:
                return resolved
        return Setting(Unknown(f"expression `{ctx.short(value)}`"), kind, ctx.origin(value), ctx.text(value), note=note)

    def resolve_in_scope(self, name: cst.Name, scope: cst.CSTNode, note: str) -> Optional[Setting]:
        ctx = self.ctx
        bindings = ctx.assignments(scope, name.value)
        if not bindings:
            return None
        kind = SourceKind.CODE_KEYWORD
        first = bindings[0]
        if (
            len(bindings) == 1
            and not first.conditional
            and first.value is not None
            and literal_value(first.value) is None
        ):
            return Setting(None, kind, ctx.origin(first.value), ctx.text(first.value), note=note)
        described = ", ".join(describe_binding(ctx, binding) for binding in bindings)
        reason = f"`{name.value}` is assigned {described}"
        if len(bindings) > 1 or first.conditional:
            reason += " depending on the branch taken"
        return Setting(Unknown(reason), kind, ctx.origin(name), ctx.text(name), note=note)


def parameter_names(params: cst.Parameters) -> FrozenSet[str]:
    """The names a function's parameters bind, `*args` and `**kwargs` included."""
    names = [param.name.value for param in (*params.posonly_params, *params.params, *params.kwonly_params)]
    for star in (params.star_arg, params.star_kwarg):
        if isinstance(star, cst.Param):
            names.append(star.name.value)
    return frozenset(names)


def names_a_knob(keyword: str) -> bool:
    """A keyword whose bare-name value is followed to its one binding (the prefilter keeps those bindings)."""
    return keyword in ADAPTER_KEYWORDS or knob_for(keyword) is not None
