"""Statements: the tree walk, control flow, and merging the states of branches that may or may not run."""

from __future__ import annotations

from typing import List, Sequence, Tuple

from trainlint.core import Setting, SourceKind, Unknown, Value
from trainlint.readers.shell.base import ReaderBase
from trainlint.readers.shell.merging import adopt, merge
from trainlint.readers.shell.syntax import EXPANSION_TYPES, adjacent_groups, node_text
from trainlint.readers.shell.values import Binding, Ctx, Node, Piece, State, Word, store

# Deeper than any launcher, and shallow enough for Python's recursion limit (a level takes a few frames).
MAX_NESTING = 100


def split_clause(node: Node) -> Tuple[List[Node], List[Node], List[Node]]:
    conditions: List[Node] = []
    body: List[Node] = []
    clauses: List[Node] = []
    seen_then = False
    for child in node.children:
        if child.type == "then":
            seen_then = True
        elif child.type in ("elif_clause", "else_clause"):
            clauses.append(child)
        elif child.is_named:
            (body if seen_then else conditions).append(child)
    return conditions, body, clauses


class StatementsMixin(ReaderBase):
    """Walks the tree statement by statement; a branch that may or may not run is merged into the state."""

    def _exec(self, node: Node, ctx: Ctx, state: State) -> None:
        if self.nesting >= MAX_NESTING:
            self._unmodelled(f"statements nest more than {MAX_NESTING} levels deep here; what is inside is not read",
                             self._node_span(ctx.doc, node))
            return
        self.nesting += 1
        try:
            self._exec_statement(node, ctx, state)
        finally:
            self.nesting -= 1

    def _exec_statement(self, node: Node, ctx: Ctx, state: State) -> None:
        kind = node.type
        if kind in ("program", "compound_statement", "do_group", "ERROR"):
            for child in node.named_children:
                self._exec(child, ctx, state)
        elif kind == "comment":
            return
        elif kind == "variable_assignment":
            self._assign(node, ctx, state)
        elif kind == "variable_assignments":
            for child in node.named_children:
                if child.type == "variable_assignment":
                    self._assign(child, ctx, state)
        elif kind == "declaration_command":
            self._declare(node, ctx, state)
        elif kind == "unset_command":
            self._unset(node, ctx, state)
        elif kind == "command":
            self._command(node, ctx, state)
        elif kind == "redirected_statement":
            self._redirected(node, ctx, state)
        elif kind == "pipeline":
            for child in node.named_children:
                self._exec(child, ctx, state.copy())
        elif kind == "list":
            self._list(node, ctx, state)
        elif kind == "subshell":
            inner = state.copy()
            for child in node.named_children:
                self._exec(child, ctx, inner)
        elif kind == "negated_command":
            for child in node.named_children:
                self._exec(child, ctx, state)
        elif kind == "if_statement":
            self._if(node, ctx, state)
        elif kind == "case_statement":
            self._case(node, ctx, state)
        elif kind in ("for_statement", "select_statement"):
            self._for(node, ctx, state)
        elif kind in ("while_statement", "c_style_for_statement"):
            self._loop(node, ctx, state)
        elif kind == "function_definition":
            self._define_function(node, ctx, state)
        else:
            self._scan(node, ctx, state)

    def _scan(self, node: Node, ctx: Ctx, state: State) -> None:
        """Evaluate every expansion under `node` only to record its flows (in file order, without recursion:
        the node may be a deeply nested part tree-sitter could not parse)."""
        stack = [node]
        while stack:
            current = stack.pop()
            if current.type in EXPANSION_TYPES:
                self._pieces(current, ctx, state, in_dquote=True)
            else:
                stack.extend(reversed(current.children))

    def _exec_branch(self, nodes: Sequence[Node], ctx: Ctx, state: State) -> State:
        branch = state.copy()
        for child in nodes:
            self._exec(child, ctx, branch)
        return branch

    def _redirected(self, node: Node, ctx: Ctx, state: State) -> None:
        body = node.child_by_field_name("body")
        redirects = [other for other in node.named_children if body is None or other.id != body.id]
        for child in node.named_children:
            if body is not None and child.id == body.id and child.type == "command":
                self._command(child, ctx, state, redirects)
            elif body is not None and child.id == body.id:
                self._exec(child, ctx, state)
            else:
                self._scan(child, ctx, state)
        self._note_written(redirects, ctx, state)

    def _list(self, node: Node, ctx: Ctx, state: State) -> None:
        operator = None
        for child in node.children:
            if not child.is_named:
                operator = child.type
                continue
            if operator == "||":  # a fallback that may or may not run
                branch = self._exec_branch([child], ctx, state)
                adopt(state, self._merge([state, branch], node, ctx))
            else:
                self._exec(child, ctx, state)

    def _if(self, node: Node, ctx: Ctx, state: State) -> None:
        conditions, body, clauses = split_clause(node)
        for condition in conditions:
            self._exec(condition, ctx, state)
        branches = [self._exec_branch(body, ctx, state)]
        has_else = False
        for clause in clauses:
            if clause.type == "else_clause":
                has_else = True
                branches.append(self._exec_branch(clause.named_children, ctx, state))
            else:
                clause_conditions, clause_body, _ = split_clause(clause)
                branch = state.copy()
                for child in list(clause_conditions) + list(clause_body):
                    self._exec(child, ctx, branch)
                branches.append(branch)
        if not has_else:
            branches.append(state)
        adopt(state, self._merge(branches, node, ctx))

    def _case(self, node: Node, ctx: Ctx, state: State) -> None:
        branches: List[State] = []
        has_default = False
        for index, child in enumerate(node.children):
            if node.field_name_for_child(index) == "value":
                self._scan(child, ctx, state)
            if child.type != "case_item":
                continue
            body = []
            for item_index, part in enumerate(child.children):
                if child.field_name_for_child(item_index) == "value":
                    if node_text(ctx.doc, part).strip() == "*":
                        has_default = True
                elif part.is_named:
                    body.append(part)
            branches.append(self._exec_branch(body, ctx, state))
        if not has_default:
            branches.append(state)
        adopt(state, self._merge(branches, node, ctx))

    def _for(self, node: Node, ctx: Ctx, state: State) -> None:
        variable = node.child_by_field_name("variable")
        values = [child for index, child in enumerate(node.children) if node.field_name_for_child(index) == "value"]
        body = node.child_by_field_name("body")
        branch = state.copy()
        if variable is not None:
            words: List[Word] = []
            for group in adjacent_groups(values):
                words.extend(self._words(group, ctx, state, SourceKind.SHELL_VARIABLE))
            name = node_text(ctx.doc, variable)
            if values:
                span = ctx.doc.span(values[0].start_byte, values[-1].end_byte)
            else:
                span = self._node_span(ctx.doc, variable)
            line = self._origin(span).line
            if len(words) == 1 and isinstance(words[0].value, str):
                pieces = words[0].pieces
                value: Value = words[0].value
            else:
                value = Unknown(f"${name} takes each value of the `for` loop at line {line}")
                pieces = (Piece(unknown=value, unknown_span=span, region=span),)
            setting = Setting(value, SourceKind.SHELL_VARIABLE, self._origin(span), self._outer_text(span))
            branch.env[name] = Binding(store(pieces, span), (setting,))
        if body is not None:
            self._exec(body, ctx, branch)
        adopt(state, self._merge([state, branch], node, ctx))

    def _loop(self, node: Node, ctx: Ctx, state: State) -> None:
        body = node.child_by_field_name("body")
        branch = state.copy()
        for index, child in enumerate(node.children):
            field_name = node.field_name_for_child(index)
            if field_name == "condition" and child.is_named:
                self._exec(child, ctx, branch)
            elif field_name in ("initializer", "update") and child.is_named:
                self._loop_counter(child, ctx, branch)
        if body is not None:
            self._exec(body, ctx, branch)
        adopt(state, self._merge([state, branch], node, ctx))

    def _loop_counter(self, node: Node, ctx: Ctx, state: State) -> None:
        target = node.child_by_field_name("name") or (node.named_children[0] if node.named_children else None)
        if target is None or target.type not in ("variable_name", "word"):
            return
        name = node_text(ctx.doc, target)
        span = self._node_span(ctx.doc, node)
        reason = Unknown(f"${name} is the counter of the loop at line {self._origin(span).line}")
        setting = Setting(reason, SourceKind.SHELL_VARIABLE, self._origin(span), self._outer_text(span))
        state.env[name] = Binding((Piece(unknown=reason, unknown_span=span, region=span),), (setting,))

    def _merge(self, branches: Sequence[State], node: Node, ctx: Ctx) -> State:
        return merge(branches, self._origin(self._node_span(ctx.doc, node)).line)
