"""State schemas: a workflow's ``state_schema`` declares and types its session-state keys.

Following ADK (``workflow/_base_node.py``): keys with the ``app:``, ``user:`` or ``temp:`` prefix
are not checked; every parameter a function node binds from state must be a declared field.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ValidationError

from ._errors import ConfigurationError, WorkflowDataError
from ._state import APP_PREFIX, TEMP_PREFIX, USER_PREFIX

if TYPE_CHECKING:
    from ._workflow import Workflow

__all__ = ["check_state_schema", "validate_state_delta"]

_PREFIXES = (APP_PREFIX, USER_PREFIX, TEMP_PREFIX)


def check_state_schema(workflow: Workflow, schema: type[BaseModel]) -> None:
    """Refuse function nodes that bind state keys the schema does not declare."""
    from ._node import FunctionNode  # a cycle: _node imports _context, which imports this module

    fields = schema.model_fields
    for name, node in workflow.graph.nodes.items():
        if not isinstance(node, FunctionNode) or node.parameter_binding != "state":
            continue
        for param in node._binding.params:
            if param.source == "state" and not param.name.startswith(_PREFIXES) and param.name not in fields:
                raise ConfigurationError(
                    f"Workflow {workflow.name}: node {name} reads state key {param.name!r}, "
                    f"which its state_schema {schema.__name__} does not declare."
                )


def validate_state_delta(schema: type[BaseModel], delta: dict[str, Any], where: str) -> None:
    """Check each session key of ``delta`` against ``schema``'s fields.

    Raises:
        WorkflowDataError: an undeclared key or a value of the wrong type.
    """
    errors: list[dict[str, Any]] = []
    for key, value in delta.items():
        if key.startswith(_PREFIXES):
            continue
        field = schema.model_fields.get(key)
        if field is None:
            errors.append({"path": [key], "message": "not declared in the state_schema"})
            continue
        try:
            schema.__pydantic_validator__.validate_assignment(schema.model_construct(), key, value)
        except ValidationError as exc:
            errors.extend({"path": [key, *e["loc"][1:]], "message": e["msg"]} for e in exc.errors())
    if errors:
        raise WorkflowDataError(f"{where}: state write does not match the state_schema.", errors=errors)
