"""Files a script writes with an output redirection (`cat <<EOF > ds_config.json`, `echo '{...}' > zero2.json`):
a launch after it may name one that the tree does not hold, which exists when the launch runs."""

from __future__ import annotations

import os
from typing import Optional, Sequence

from trainlint.readers.shell.base import ReaderBase
from trainlint.readers.shell.values import Ctx, Node, State, value_of

# Operators that create (or append to) the file they name; `>&` names a file only when its target is no number.
_WRITING = frozenset({">", ">>", ">|", "&>", "&>>", ">&"})


class WrittenFilesMixin(ReaderBase):
    """Notes in the state each file a command's redirections write."""

    def _note_written(self, redirects: Sequence[Node], ctx: Ctx, state: State) -> None:
        for redirect in redirects:
            # `cat <<EOF > out`: tree-sitter-bash keeps the output redirection inside the here-doc's node.
            for node in [redirect, *redirect.named_children]:
                path = self._written_path(node, ctx, state) if node.type == "file_redirect" else None
                if path is not None and path not in state.written:
                    state.written = (*state.written, path)

    def _written_path(self, node: Node, ctx: Ctx, state: State) -> Optional[str]:
        if not any(child.type in _WRITING for child in node.children):
            return None
        destination = node.child_by_field_name("destination")
        if destination is None:
            return None
        target = value_of(self._group_pieces([destination], ctx, state, False))
        if not isinstance(target, str) or not target or target.isdigit() or target == "/dev/null":
            return None
        if os.path.isabs(target) or state.cwd_lost or state.cwd is None:
            return os.path.normpath(target)
        return os.path.normpath(os.path.join(state.cwd, target))
