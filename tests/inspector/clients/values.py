"""A parsed node as the plain value it stands for (what ``json.loads`` would build)."""

from __future__ import annotations

from mcpeek.inspector.clients.jsonc import Array, Node, Object, Scalar


def plain(node: Node) -> object:
    if isinstance(node, Scalar):
        return node.value
    if isinstance(node, Array):
        return [plain(item) for item in node.items]
    assert isinstance(node, Object)
    return {member.key: plain(member.value) for member in node.members}
