"""Incident triage: a person classifies an incident in a form generated from a ``response_schema``.

START → record_incident → ask_triage (``RequestInput`` whose ``response_schema`` is the pydantic
model :class:`Triage`: an enum, text, a number, a boolean, a list and a nested object) →
route_triage, then ``page`` → page_on_call (high or critical severity, or asked for) or
``log`` → log_incident. The answer arrives validated against the schema; the inbox renders the
schema as a form and validates it on the server before anything is stored.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from reviewconsole.workflows import Event, RequestInput, Workflow

__all__ = ["KIND", "IncidentInput", "Triage", "build"]

KIND = "incident_triage"


class IncidentInput(BaseModel):
    """What starts a session: the incident's title and what is known."""

    title: str = Field(min_length=1, max_length=200)
    details: str = Field(default="", max_length=20_000)


class Contact(BaseModel):
    """Who follows the incident up."""

    name: str = Field(min_length=1, max_length=100)
    email: str | None = Field(default=None, max_length=200, json_schema_extra={"format": "email"})


class Triage(BaseModel):
    """A reviewer's triage of an incident."""

    severity: Literal["low", "medium", "high", "critical"]
    summary: str = Field(min_length=5, max_length=500, description="One or two sentences for the incident log.")
    affected_customers: int = Field(ge=0, le=10_000_000, description="An estimate is fine.")
    page_on_call: bool = Field(default=False, description="Page the on-call engineer whatever the severity.")
    components: list[str] = Field(default_factory=list, max_length=10, description="Systems involved.")
    contact: Contact


def record_incident(node_input: Any) -> Event:
    """Keep the incident in the state."""
    incident = dict(node_input) if isinstance(node_input, dict) else {"title": str(node_input), "details": ""}
    return Event(state={"incident": incident})


def ask_triage(incident: dict[str, Any]) -> RequestInput:
    """Ask a person to triage the incident with the :class:`Triage` form."""
    return RequestInput(
        message=f"Triage this incident: {incident.get('title', '')}",
        payload={"incident": incident},
        response_schema=Triage,
        metadata={"kind": KIND},
    )


def route_triage(node_input: Any) -> Event:
    """Page on call for high or critical incidents (or when asked), else log."""
    triage = dict(node_input) if isinstance(node_input, dict) else {}
    urgent = triage.get("severity") in ("high", "critical") or bool(triage.get("page_on_call"))
    return Event(state={"triage": triage}, route="page" if urgent else "log")


def page_on_call(triage: dict[str, Any]) -> Event:
    return Event(message=f"Paged on call: {triage.get('severity', '?')} incident, {triage.get('summary', '')}")


def log_incident(triage: dict[str, Any]) -> Event:
    return Event(message=f"Logged a {triage.get('severity', '?')} incident: {triage.get('summary', '')}")


def build(model: Any = None, *, name: str = "incident_triage") -> Workflow:
    """The workflow (it calls no model)."""
    return Workflow(
        name,
        edges=[
            ("START", record_incident, ask_triage, route_triage),
            (route_triage, {"page": page_on_call, "log": log_incident}),
        ],
        input_schema=IncidentInput,
        description="Triage an incident with a structured form.",
    )
