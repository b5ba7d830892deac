"""Fan-in: a join node waits for all its predecessors (ADK ``workflow/_join_node.py``)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from ._node import BaseNode

if TYPE_CHECKING:
    from ._context import Context

__all__ = ["JoinNode"]


class JoinNode(BaseNode):
    """Fires once every predecessor has finished; outputs ``{predecessor name: its output}``."""

    wait_for_all = True

    def __init__(self, name: str = "join", *, description: str = "") -> None:
        super().__init__(name=name, description=description)

    async def run(self, ctx: Context) -> AsyncIterator[Any]:
        yield ctx.node_input
