"""What the tree-sitter formats (shell, JSON) share: counting the places a parse failed."""
from __future__ import annotations


def error_count(root) -> int:
    """ERROR and MISSING nodes under `root`, an ERROR's own children not counted again."""
    count = 0
    stack = [root]
    while stack:
        node = stack.pop()
        if node.type == "ERROR" or node.is_missing:
            count += 1
        elif node.has_error:
            stack.extend(node.children)
    return count
