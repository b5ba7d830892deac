"""Nodes and workflows as tools (ADK ``tools/_node_tool.py``).

Any node in an agent's ``tools`` is wrapped in a :class:`NodeTool`. Its arguments come from the
node's ``input_schema`` (a Workflow must have one), or a function node's parameters. A primitive
input schema (``str``, ``int``…) is wrapped as ``{"request": value}``. Each call runs the node
as a child of the agent on its own branch ``<tool>@<function call id>`` (run id = call id), so its
events stay out of the agent model's context and repeated calls never share resume state.
Interrupts raised inside the child pause the agent; their answers resume the child, and the
child's output becomes the tool's function response (``{"result": value}`` unless a dict).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, TypeAdapter, ValidationError

from ._errors import ConfigurationError
from ._node import BaseNode, FunctionNode
from ._tools import BaseTool, FunctionTool, ToolArgumentError
from ._workflow import Workflow

__all__ = ["NodeTool"]


class NodeTool(BaseTool):
    """Wraps ``node`` as a tool (see the module docstring).

    Its calls are listed in ``longRunningToolIds`` (the child may pause), but its declaration
    carries no long-running note: the model waits for one result, as with any tool.
    """

    is_long_running = True

    def __init__(self, node: BaseNode, *, name: str | None = None, description: str | None = None) -> None:
        super().__init__(
            name=name or node.name, description=description if description is not None else node.description
        )
        if isinstance(node, Workflow) and node.input_schema is None:
            raise ConfigurationError(f"Workflow {node.name} needs an input_schema to be used as a tool.")
        if isinstance(node, FunctionNode) and node.parameter_binding != "node_input" and node.input_schema is None:
            node = FunctionNode(
                node.func,
                name=node.name,
                parameter_binding="node_input",
                rerun_on_resume=node.rerun_on_resume,
                retry_config=node.retry_config,
                timeout=node.timeout,
                require_confirmation=node.require_confirmation,
                output_schema=node.output_schema,
                description=node.description,
            )
        self.node = node
        self._primitive = False
        self._adapter: TypeAdapter[Any] | None = None
        if node.input_schema is not None:
            self._adapter = TypeAdapter(node.input_schema)
            schema = self._adapter.json_schema()
            if schema.get("type") != "object":
                self._primitive = True
                schema = {"type": "object", "properties": {"request": schema}, "required": ["request"]}
            self._schema = schema
        elif isinstance(node, FunctionNode):
            self._schema = FunctionTool(node.func, name=node.name).parameters()
        else:
            self._schema = {"type": "object", "properties": {}}

    def parameters(self) -> dict[str, Any]:
        return self._schema

    def declaration(self) -> dict[str, Any]:
        return {"name": self.name, "description": self.description, "parameters": self._schema}

    def child_input(self, args: dict[str, Any]) -> Any:
        """The child's ``node_input`` for these arguments; raises ToolArgumentError."""
        value: Any = args.get("request") if self._primitive else args
        if self._adapter is None:
            return value
        try:
            validated = self._adapter.validate_python(value)
        except ValidationError as exc:
            errors = [{"path": list(e["loc"]), "message": e["msg"]} for e in exc.errors()]
            raise ToolArgumentError(f"Invalid arguments for {self.name}: {exc.error_count()} error(s)", errors) from exc
        return validated.model_dump(mode="json") if isinstance(validated, BaseModel) else validated

    async def call(self, args: dict[str, Any], tool_context: Any) -> Any:
        raise ConfigurationError("A NodeTool runs as a child of its agent, not through call().")
