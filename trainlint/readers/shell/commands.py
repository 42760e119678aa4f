"""Simple commands: function calls, `cd`/`pushd`/`popd`, `read`, `eval`, `source`; anything else may be a launch."""

from __future__ import annotations

import posixpath
import re
from dataclasses import replace
from typing import Dict, List, Optional, Sequence

from trainlint.core import Setting, SourceKind
from trainlint.readers.shell.arguments import call_arguments, change_positional
from trainlint.readers.shell.base import ReaderBase
from trainlint.readers.shell.heredocs import STDIN_REDIRECTS
from trainlint.readers.shell.syntax import adjacent_groups, node_text
from trainlint.readers.shell.values import Ctx, Node, State, Word

# `$(dirname "$0")`, `$(dirname "${BASH_SOURCE[0]}")`, quoted or not, then a literal path below it.
_SCRIPT_DIR = re.compile(r"""^"?\$\(\s*dirname\s+(?:--\s+)?"?"""
                         r"""(?:\$0|\$\{0\}|\$\{BASH_SOURCE(?:\[0\])?\}|\$BASH_SOURCE)"?\s*\)"""
                         r"""(?P<rest>/[^"$`\s]*)?"?$""")


def _below_script_dir(written: str) -> Optional[str]:
    """The folder a `cd` into the script's own folder reaches, relative to that folder ("." for the folder
    itself), or None when the word is not such a path."""
    found = _SCRIPT_DIR.match(written.strip())
    if found is None:
        return None
    return posixpath.normpath((found.group("rest") or "").lstrip("/") or ".")

MAX_FUNCTION_DEPTH = 8
MAX_FUNCTION_CALLS = 500
# Far more than any launcher passes; keeps reading a generated command of megabytes within a second or so.
MAX_COMMAND_WORDS = 5000


class CommandsMixin(ReaderBase):
    """Runs the builtins and functions that change the state; hands every other command to the launches."""

    def _command(self, node: Node, ctx: Ctx, state: State, redirects: Sequence[Node] = ()) -> None:
        """`redirects`: those of the statement around the command (a here-doc is one)."""
        parts: List[Node] = []
        for index, child in enumerate(node.children):
            field_name = node.field_name_for_child(index)
            if child.type == "command_name":
                parts.extend(child.named_children)
            elif field_name == "argument" or (
                child.is_named
                and child.type not in ("comment", "file_redirect", "herestring_redirect", "heredoc_redirect")
            ):
                parts.append(child)
            elif child.is_named:
                self._scan(child, ctx, state)
        prefixes: List[List[Node]] = []
        words: List[Word] = []
        for group in adjacent_groups(parts):
            if len(words) >= MAX_COMMAND_WORDS:
                span = ctx.doc.span(group[0].start_byte, parts[-1].end_byte)
                self._unmodelled(f"the command has more than {MAX_COMMAND_WORDS} words; the rest of it is not read",
                                 span)
                break
            if not words and group[0].type == "variable_assignment":
                prefixes.append(group)
            else:
                words.extend(self._words(group, ctx, state, SourceKind.LAUNCHER_FLAG))
        if not words:
            # Only assignments: tree-sitter splits `X=a/$B/$C` into an assignment and a "command".
            for group in prefixes:
                self._assign(group[0], ctx, state, extra=group[1:])
            return
        prefix_env = self._prefix_env(prefixes, ctx, state)
        name = words[0].known
        if name in state.functions:
            self._call_function(name, node, ctx, state, words[1:])
            return
        if name in ("cd", "pushd", "popd"):
            self._change_directory(name, words[1:], state)
            return
        if name == "read":
            own = [child for child in node.children if child.type in STDIN_REDIRECTS]
            self._read_builtin(words[1:], [*redirects, *own], prefix_env, ctx, state)
            return
        if name in ("shift", "set"):
            change_positional(name, words[1:], state)
            return
        if name == "eval":
            self._eval(node, words[1:], ctx, state)
            return
        if name in ("source", "."):
            if len(words) > 1:
                label = words[1].known or words[1].setting.text
                state.sourced = tuple(dict.fromkeys(state.sourced + (f"`{label}`",)))
            return
        self._maybe_launch(node, words, prefix_env, ctx, state)

    def _call_function(self, name: str, node: Node, ctx: Ctx, state: State, words: Sequence[Word] = ()) -> None:
        """Follows a call into the function's body, with the call's words as its `$1`, `$2`, ..., within a depth and
        a total number of calls: functions that each call the next several times would otherwise take exponential
        time."""
        self.called_functions.add(name)
        if ctx.function_depth >= MAX_FUNCTION_DEPTH:
            self._unmodelled(f"the call to `{name}` is not followed: calls nest more than {MAX_FUNCTION_DEPTH} deep; "
                             "what it sets and launches is not read", self._node_span(ctx.doc, node))
            return
        if self.function_calls >= MAX_FUNCTION_CALLS:
            if self.function_calls == MAX_FUNCTION_CALLS:  # said once: every later call is skipped the same way
                self.function_calls += 1
                self._unmodelled(f"the script makes more than {MAX_FUNCTION_CALLS} function calls; from this call "
                                 f"to `{name}` on, calls are not followed and what they set and launch is not read",
                                 self._node_span(ctx.doc, node))
            return
        self.function_calls += 1
        body, doc = state.functions[name]
        inner = replace(ctx, doc=doc, function_depth=ctx.function_depth + 1)
        given = call_arguments(words)
        if given.words:
            inner = replace(inner, called_at=(*ctx.called_at, self._origin(self._node_span(ctx.doc, node))))
        arguments, state.arguments = state.arguments, given  # a function's `$1` is its own
        try:
            self._call_body(body, inner, state)
        finally:
            state.arguments = arguments

    def _prefix_env(self, prefixes: Sequence[List[Node]], ctx: Ctx, state: State) -> Dict[str, Setting]:
        env: Dict[str, Setting] = {}
        scratch = state.copy()
        for prefix in prefixes:
            assigned = self._assign(prefix[0], ctx, scratch, exported=True, extra=prefix[1:])
            if assigned is not None and assigned[1].setting is not None:
                env[assigned[0]] = assigned[1].setting
        return env

    def _call_body(self, body: Node, ctx: Ctx, state: State) -> None:
        state.local_frames.append({})
        try:
            self._exec(body, ctx, state)
        finally:
            frame = state.local_frames.pop()
            for name, previous in frame.items():
                if previous is None:
                    state.env.pop(name, None)
                else:
                    state.env[name] = previous

    def _define_function(self, node: Node, ctx: Ctx, state: State) -> None:
        name_node = node.child_by_field_name("name")
        body = node.child_by_field_name("body")
        if name_node is not None and body is not None:
            state.functions[node_text(ctx.doc, name_node)] = (body, ctx.doc)

    def _change_directory(self, builtin: str, args: Sequence[Word], state: State) -> None:
        operands = [word for word in args if not (word.known or "").startswith("-") or word.known == "-"]
        if builtin == "popd":
            if state.dir_stack:
                previous = state.dir_stack.pop()
                state.cwd, state.cwd_lost = previous, previous is None and state.cwd_lost
            else:
                state.cwd, state.cwd_lost = None, True
            return
        if builtin == "pushd":
            state.dir_stack.append(None if state.cwd_lost else state.cwd)
        target = operands[0].known if operands else "~"
        if target is None and operands and state.cwd is None and not state.cwd_lost:
            # `cd "$(dirname "$0")/.."` before any other cd: the script's own folder, which the run's
            # directory is counted from (`$0` is the script as invoked, from the directory it was invoked in).
            below = _below_script_dir(operands[0].setting.text)
            if below is not None:
                state.cwd = None if below == "." else below
                return
        if target is None or target == "-":
            state.cwd, state.cwd_lost = None, True
        elif target.startswith(("/", "~")):
            state.cwd, state.cwd_lost = target, False
        elif not state.cwd_lost:
            joined = posixpath.normpath(posixpath.join(state.cwd or "", target))
            # `cd eval/x` then `cd ../..` is back where the script started: no `cd` at all.
            state.cwd = None if joined == "." else joined
