"""The authorisation matrix: every URL (found with ``get_resolver()``), every API call and the
inbox websocket, for every persona of ``tests/personas.py``.

``test_every_url_has_an_expectation`` fails for a URL pattern with no entry in ``EXPECTATIONS``
(admin URLs: for a model missing from ``ADMIN_MODELS``), so a new door cannot ship untested:
whoever adds a URL adds its row here. Each row says, per persona, the status expected (and for a
redirect, where to); a refused write must leave the item and the session unchanged.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pytest
from django.contrib import admin
from django.urls import URLPattern, URLResolver, get_resolver

from reviewconsole.admin_site import INTERNAL
from reviewconsole.inbox.models import Item
from reviewconsole.workflow_sessions.models import WorkflowSession
from tests.conftest import COMPLAINT, post_webhook
from tests.personas import API_CLIENTS, PERSONAS, USERS, persona_client

LOGIN = (302, "/accounts/login/")
SOON = (dt.datetime.now(dt.UTC) + dt.timedelta(days=1)).isoformat()
"""A due time a defer takes (in the future, within 90 days)."""
ADMIN_LOGIN = (302, "/admin/login/")
NO_SESSION = ("anonymous", *API_CLIENTS)  # a bearer token never logs anyone into the pages


def every(default: Any, **overrides: Any) -> dict[str, Any]:
    """An expectation for every persona: ``default`` unless overridden."""
    unknown = set(overrides) - set(PERSONAS)
    assert not unknown, unknown
    return {p: overrides.get(p, default) for p in PERSONAS}


def pages(allowed: Any, **overrides: Any) -> dict[str, Any]:
    """A login-required page: ``allowed`` for users, the login redirect without a session."""
    return every(allowed, **dict.fromkeys(NO_SESSION, LOGIN), **overrides)


def api(allowed: Any, **overrides: Any) -> dict[str, Any]:
    """An API call: ``allowed`` for the scoped client, 401 for everyone without a token."""
    return every(401, client=allowed, **overrides)


@dataclass
class Check:
    method: str
    path: Callable[[dict[str, Any]], str]
    expect: dict[str, Any]
    data: dict[str, Any] | Callable[[dict[str, Any]], dict[str, Any]] = field(default_factory=dict)
    json: bool = False
    writes: bool = False  # a refused request must change nothing


EXPECTATIONS: dict[str, list[Check]] = {
    "": [Check("GET", lambda w: "/", every(302))],
    "favicon.ico": [Check("GET", lambda w: "/favicon.ico", every((302, "/static/console/favicon.svg")))],
    "inbox/": [Check("GET", lambda w: "/inbox/", pages(200))],
    "inbox/items.json": [Check("GET", lambda w: "/inbox/items.json", pages(200))],
    "inbox/items/<int:pk>/": [
        Check("GET", lambda w: f"/inbox/items/{w['item']}/", pages(200, other_reviewer=404, auditor=404, staff=404)),
        Check("POST", lambda w: f"/inbox/items/{w['item']}/", pages(405, other_reviewer=405, auditor=405, staff=405)),
    ],
    "inbox/items/<int:pk>/decide/": [
        Check("GET", lambda w: f"/inbox/items/{w['item']}/decide/", pages(405)),
        Check(
            "POST",
            lambda w: f"/inbox/items/{w['item']}/decide/",
            pages((302, "/inbox/"), other_reviewer=404, auditor=404, staff=404),
            data={"action": "approve"},
            writes=True,
        ),
    ],
    # The inbox (issue 4): reads 404 outside one's queues; every action a POST; managers only for
    # take-over and reassign (a reviewer of the queue gets 403, the detail page with the reason).
    "inbox/changes.json": [Check("GET", lambda w: "/inbox/changes.json?since=", pages(200))],
    "inbox/bulk/": [
        Check("GET", lambda w: "/inbox/bulk/", pages(405)),
        Check(
            "POST",
            lambda w: "/inbox/bulk/",
            pages((302, "/inbox/")),
            data=lambda w: {"action": "claim", "ids": [w["item"]]},
            writes=True,
        ),
    ],
    "inbox/items/<int:pk>/status.json": [
        Check(
            "GET",
            lambda w: f"/inbox/items/{w['item']}/status.json",
            pages(200, other_reviewer=404, auditor=404, staff=404),
        ),
    ],
    # After feedback (issue 17): the page that waits for the session's next draft, and its JSON.
    "inbox/items/<int:pk>/after-feedback/": [
        Check(
            "GET",
            lambda w: f"/inbox/items/{w['item']}/after-feedback/",
            pages(200, other_reviewer=404, auditor=404, staff=404),
        ),
        Check("POST", lambda w: f"/inbox/items/{w['item']}/after-feedback/", pages(405), writes=True),
    ],
    "inbox/items/<int:pk>/next.json": [
        Check(
            "GET",
            lambda w: f"/inbox/items/{w['item']}/next.json",
            pages(200, other_reviewer=404, auditor=404, staff=404),
        ),
        Check("POST", lambda w: f"/inbox/items/{w['item']}/next.json", pages(405), writes=True),
    ],
    "inbox/items/<int:pk>/history/": [
        Check(
            "GET",
            lambda w: f"/inbox/items/{w['item']}/history/",
            pages(200, other_reviewer=404, auditor=404, staff=404),
        ),
    ],
    "inbox/items/<int:pk>/claim/": [
        Check("GET", lambda w: f"/inbox/items/{w['item']}/claim/", pages(405)),
        Check(
            "POST",
            lambda w: f"/inbox/items/{w['item']}/claim/",
            pages((302, "/inbox/items/"), other_reviewer=404, auditor=404, staff=404),
            writes=True,
        ),
    ],
    "inbox/items/<int:pk>/unclaim/": [
        Check("GET", lambda w: f"/inbox/items/{w['item']}/unclaim/", pages(405)),
        Check(
            "POST",
            lambda w: f"/inbox/items/{w['item']}/unclaim/",
            pages((302, "/inbox/items/"), other_reviewer=404, auditor=404, staff=404),
            writes=True,
        ),
    ],
    "inbox/items/<int:pk>/take-over/": [
        Check("GET", lambda w: f"/inbox/items/{w['item']}/take-over/", pages(405)),
        Check(
            "POST",
            lambda w: f"/inbox/items/{w['item']}/take-over/",
            pages(
                403,
                queue_manager=(302, "/inbox/items/"),
                admin=(302, "/inbox/items/"),
                other_reviewer=404,
                auditor=404,
                staff=404,
            ),
            writes=True,
        ),
    ],
    "inbox/items/<int:pk>/reassign/": [
        Check("GET", lambda w: f"/inbox/items/{w['item']}/reassign/", pages(405)),
        Check(
            "POST",
            lambda w: f"/inbox/items/{w['item']}/reassign/",
            pages(
                403, queue_manager=(302, "/inbox/"), admin=(302, "/inbox/"), other_reviewer=404, auditor=404, staff=404
            ),
            data={"to_queue": "finance"},
            writes=True,
        ),
    ],
    # The review lifecycle (issue 15): reviewers of the queue defer, return, escalate and comment
    # (a return with no claim is a 409; an escalation to a queue they do not review lands on the
    # inbox); managers cancel (a reviewer gets 403); outside the queue 404.
    "inbox/items/<int:pk>/defer/": [
        Check("GET", lambda w: f"/inbox/items/{w['item']}/defer/", pages(405)),
        Check(
            "POST",
            lambda w: f"/inbox/items/{w['item']}/defer/",
            pages((302, "/inbox/items/"), other_reviewer=404, auditor=404, staff=404),
            data={"due_at": SOON, "note": "matrix"},
            writes=True,
        ),
    ],
    "inbox/items/<int:pk>/release/": [
        Check("GET", lambda w: f"/inbox/items/{w['item']}/release/", pages(405)),
        Check(
            "POST",
            lambda w: f"/inbox/items/{w['item']}/release/",
            pages(409, other_reviewer=404, auditor=404, staff=404),
            data={"note": "matrix"},
            writes=True,
        ),
    ],
    "inbox/items/<int:pk>/escalate/": [
        Check("GET", lambda w: f"/inbox/items/{w['item']}/escalate/", pages(405)),
        Check(
            "POST",
            lambda w: f"/inbox/items/{w['item']}/escalate/",
            pages((302, "/inbox/"), admin=(302, "/inbox/items/"), other_reviewer=404, auditor=404, staff=404),
            data={"note": "matrix"},
            writes=True,
        ),
    ],
    "inbox/items/<int:pk>/cancel/": [
        Check("GET", lambda w: f"/inbox/items/{w['item']}/cancel/", pages(405)),
        Check(
            "POST",
            lambda w: f"/inbox/items/{w['item']}/cancel/",
            pages(
                403,
                queue_manager=(302, "/inbox/items/"),
                admin=(302, "/inbox/items/"),
                other_reviewer=404,
                auditor=404,
                staff=404,
            ),
            data={"reason": "matrix"},
            writes=True,
        ),
    ],
    "inbox/items/<int:pk>/comment/": [
        Check("GET", lambda w: f"/inbox/items/{w['item']}/comment/", pages(405)),
        Check(
            "POST",
            lambda w: f"/inbox/items/{w['item']}/comment/",
            pages((302, "/inbox/items/"), other_reviewer=404, auditor=404, staff=404),
            data={"text": "matrix"},
            writes=True,
        ),
    ],
    # Retry (issue 12): managers of the workflow's queue only; the session here has not failed, so
    # they get 409 and nothing changes.
    "inbox/items/<int:pk>/retry/": [
        Check("GET", lambda w: f"/inbox/items/{w['item']}/retry/", pages(405)),
        Check(
            "POST",
            lambda w: f"/inbox/items/{w['item']}/retry/",
            pages(403, queue_manager=409, admin=409, other_reviewer=404, auditor=404, staff=404),
            writes=True,
        ),
    ],
    # New request (issue 12): managers of the workflow's queue (or holders of its permission) start
    # it; anyone else gets 404 for it, as for an unknown workflow. A session's page is its
    # starter's and its workflow's queue managers' (the world's session came from a webhook: the
    # manager and the superuser see it); its Retry is the managers' (the session has not failed:
    # 409, nothing changes).
    "new/": [Check("GET", lambda w: "/new/", pages(200))],
    # The managers' dashboard (issue 17): managers of a queue and superusers; JSON answers 401 without a login.
    "dashboard/": [
        Check("GET", lambda w: "/dashboard/", pages(403, queue_manager=200, admin=200)),
        Check("POST", lambda w: "/dashboard/", pages(405)),
    ],
    "dashboard/panel/": [Check("GET", lambda w: "/dashboard/panel/", pages(403, queue_manager=200, admin=200))],
    "dashboard/figures.json": [
        Check(
            "GET",
            lambda w: "/dashboard/figures.json",
            every(403, queue_manager=200, admin=200, **dict.fromkeys(NO_SESSION, 401)),
        )
    ],
    "new/<slug:workflow>/": [
        Check("GET", lambda w: "/new/email-review/", pages(404, queue_manager=200, admin=200)),
        Check(
            "POST",
            lambda w: "/new/email-review/",
            pages(404, queue_manager=(302, "/sessions/"), admin=(302, "/sessions/")),
            data={"f.complaint": "matrix"},
            writes=True,
        ),
    ],
    "sessions/<str:session_id>/": [
        Check(
            "GET",
            lambda w: f"/sessions/{w['session']}/",
            pages(404, queue_manager=(302, "/inbox/items/"), admin=(302, "/inbox/items/")),
        ),
    ],
    "sessions/<str:session_id>/status.json": [
        Check("GET", lambda w: f"/sessions/{w['session']}/status.json", pages(404, queue_manager=200, admin=200)),
    ],
    "sessions/<str:session_id>/retry/": [
        Check("GET", lambda w: f"/sessions/{w['session']}/retry/", pages(405)),
        Check(
            "POST",
            lambda w: f"/sessions/{w['session']}/retry/",
            pages(404, queue_manager=409, admin=409),
            writes=True,
        ),
    ],
    "hooks/<slug:slug>/": [
        Check("POST", lambda w: "/hooks/email-review/", every(401), data={"complaint": "x"}, json=True, writes=True),
        Check("GET", lambda w: "/hooks/email-review/", every(405)),
    ],
    "agui/<slug:workflow>/": [
        Check(
            "POST",
            lambda w: "/agui/email-review/",
            api(200, client_unscoped=403),
            data={"threadId": "matrix", "runId": "r-1", "messages": [], "state": {}},
            json=True,
            writes=True,
        ),
        Check("GET", lambda w: "/agui/email-review/", every(405)),
    ],
    # The session JSON: as the session's admin page (view permission on sessions), so staff
    # without it get 403 there and here.
    "api/sessions/<str:session_id>/": [
        Check("GET", lambda w: f"/api/sessions/{w['session']}/", every(ADMIN_LOGIN, auditor=200, admin=200, staff=403)),
    ],
    "api/v1/": [Check("GET", lambda w: "/api/v1/", every(404))],
    "api/v1/openapi.json": [Check("GET", lambda w: "/api/v1/openapi.json", every(200))],
    "api/v1/docs": [Check("GET", lambda w: "/api/v1/docs", every(200))],
    "^api/v1/(?P<path>.*)$": [  # what the API does not have: JSON 404, with or without a token
        Check("GET", lambda w: "/api/v1/nope", every(404)),
        Check("POST", lambda w: "/api/v1/sessions/x/nope", every(404), writes=True),
    ],
    "api/v1/sessions": [
        Check(
            "POST",
            lambda w: "/api/v1/sessions",
            api(202, client_unscoped=403),
            data={"workflow": "email-review", "input": {"complaint": "matrix"}},
            json=True,
            writes=True,
        ),
    ],
    "api/v1/sessions/<session_id>": [
        Check("GET", lambda w: f"/api/v1/sessions/{w['session']}", api(200, client_unscoped=404)),
    ],
    "api/v1/interrupts": [Check("GET", lambda w: "/api/v1/interrupts", api(200, client_unscoped=200))],
    "api/v1/sessions/<session_id>/resume": [
        Check(
            "POST",
            lambda w: f"/api/v1/sessions/{w['session']}/resume",
            api(202, client_unscoped=404),
            data={"payload": {"result": "approve"}},
            json=True,
            writes=True,
        ),
    ],
    "api/v1/sessions/<session_id>/cancel": [
        Check(
            "POST",
            lambda w: f"/api/v1/sessions/{w['session']}/cancel",
            api(200, client_unscoped=404),
            json=True,
            writes=True,
        ),
    ],
    # The lifecycle in the API (issue 15): the scoped client acts; another workflow's client gets 404.
    "api/v1/sessions/<session_id>/interrupts/<interrupt_id>/defer": [
        Check(
            "POST",
            lambda w: f"/api/v1/sessions/{w['session']}/interrupts/{w['interrupt']}/defer",
            api(200, client_unscoped=404),
            data={"note": "matrix", "due_at": SOON},
            json=True,
            writes=True,
        ),
    ],
    "api/v1/sessions/<session_id>/interrupts/<interrupt_id>/release": [
        Check(
            "POST",
            lambda w: f"/api/v1/sessions/{w['session']}/interrupts/{w['interrupt']}/release",
            api(409, client_unscoped=404),
            data={"note": "matrix"},
            json=True,
            writes=True,
        ),
    ],
    "api/v1/sessions/<session_id>/interrupts/<interrupt_id>/escalate": [
        Check(
            "POST",
            lambda w: f"/api/v1/sessions/{w['session']}/interrupts/{w['interrupt']}/escalate",
            api(200, client_unscoped=404),
            data={"note": "matrix"},
            json=True,
            writes=True,
        ),
    ],
    "api/v1/sessions/<session_id>/interrupts/<interrupt_id>/cancel": [
        Check(
            "POST",
            lambda w: f"/api/v1/sessions/{w['session']}/interrupts/{w['interrupt']}/cancel",
            api(200, client_unscoped=404),
            data={"reason": "matrix"},
            json=True,
            writes=True,
        ),
    ],
    "api/v1/sessions/<session_id>/interrupts/<interrupt_id>/comments": [
        Check(
            "POST",
            lambda w: f"/api/v1/sessions/{w['session']}/interrupts/{w['interrupt']}/comments",
            api(201, client_unscoped=404),
            data={"text": "matrix"},
            json=True,
            writes=True,
        ),
        Check(
            "GET",
            lambda w: f"/api/v1/sessions/{w['session']}/interrupts/{w['interrupt']}/comments",
            api(200, client_unscoped=404),
        ),
    ],
    # Reviews (issue 14): the queue scope decides who may ask; a review is its own client's only.
    "api/v1/reviews": [
        Check(
            "POST",
            lambda w: "/api/v1/reviews",
            api(201, client_unscoped=403),
            data={"title": "Matrix", "message": "Check this", "queue": "support"},
            json=True,
            writes=True,
        ),
    ],
    "api/v1/reviews/<review_id>": [
        Check("GET", lambda w: f"/api/v1/reviews/{w['review']}", api(200, client_unscoped=404)),
    ],
    "api/v1/reviews/<review_id>/cancel": [
        Check(
            "POST",
            lambda w: f"/api/v1/reviews/{w['review']}/cancel",
            api(200, client_unscoped=404),
            json=True,
            writes=True,
        ),
    ],
    "accounts/login/": [Check("GET", lambda w: "/accounts/login/", every(200))],
    "accounts/logout/": [Check("POST", lambda w: "/accounts/logout/", every(302))],
    # Preferences (issue 17): each logged-in person's own time zone and theme.
    "preferences/": [
        Check("GET", lambda w: "/preferences/", pages(200)),
        Check("POST", lambda w: "/preferences/", pages((302, "/preferences/")), data={"time_zone": "Europe/Berlin"}),
    ],
    "preferences/time-zone/": [
        Check("GET", lambda w: "/preferences/time-zone/", pages(405)),
        Check("POST", lambda w: "/preferences/time-zone/", pages(204), data={"time_zone": "Europe/Berlin"}),
    ],
    "preferences/theme/": [
        Check("GET", lambda w: "/preferences/theme/", pages(405)),
        Check("POST", lambda w: "/preferences/theme/", pages((302, "/inbox/")), data={"theme": "dark"}),
    ],
}

# Admin models: "record" rows are read-only for everyone (what happened); "config" rows are
# managed by admins; both are readable by auditors.
ADMIN_MODELS = {
    "auth.group": "config",
    "auth.user": "config",
    "workflow_sessions.workflowsession": "record",
    "workflow_sessions.event": "record",
    "workflow_sessions.checkpoint": "record",
    "workflow_sessions.answer": "record",
    "policies.policyrule": "config",
    "policies.policyverdict": "record",
    "policies.firstapproval": "record",
    "policies.standingapproval": "record",
    "inbox.queue": "config",
    "inbox.item": "record",
    "console.decision": "record",
    "hooks.webhookendpoint": "config",
    "hooks.webhookdelivery": "record",
    "api.apiclient": "config",
    "api.idempotencyrecord": "record",
    "api.review": "record",
    "audit.auditentry": "record",
    "outbound.subscription": "config",
    "outbound.outboundmessage": "record",
    "workflow_sessions.outboxevent": "record",
    "workflow_sessions.arrival": "record",
    "django_tasks_database.dbtaskresult": "record",
    "axes.accessattempt": "axes",
    "axes.accessfailurelog": "axes",
    "axes.accesslog": "axes",
}
ADMIN_SITE_URLS = {
    "admin/": "index",
    "admin/login/": "login",
    "admin/logout/": "logout",
    "admin/password_change/": "password_change",
    "admin/password_change/done/": "password_change_done",
    "admin/autocomplete/": "autocomplete",
    "admin/jsi18n/": "jsi18n",
    "admin/r/<path:content_type_id>/<path:object_id>/": "view_on_site",
    "admin/r/<int:content_type_id>/<path:object_id>/": "view_on_site",
    "admin/(?P<url>.*)$": "final_catch_all_view",
}


def _routes(patterns: list[Any], prefix: str = "") -> list[tuple[str, URLPattern]]:
    found = []
    for pattern in patterns:
        if isinstance(pattern, URLResolver):
            found += _routes(pattern.url_patterns, prefix + str(pattern.pattern))
        else:
            found.append((prefix + str(pattern.pattern), pattern))
    return found


def _admin_model_of(route: str) -> str | None:
    for model in admin.site._registry:
        if route.startswith(f"admin/{model._meta.app_label}/{model._meta.model_name}/"):
            return model._meta.label_lower
    return None


def test_every_url_has_an_expectation():
    missing = []
    for route, _ in _routes(get_resolver().url_patterns):
        if not route.startswith("admin/"):
            if route not in EXPECTATIONS:
                missing.append(route)
            continue
        if route in ADMIN_SITE_URLS or route.startswith("admin/^(?P<app_label>"):  # the app index pages
            continue
        model = _admin_model_of(route)
        if model is None or model not in ADMIN_MODELS:
            missing.append(route)
    assert not missing, "URLs without an expectation in the authorisation matrix:\n" + "\n".join(missing)


def test_every_admin_model_has_an_expectation():
    registered = {m._meta.label_lower for m in admin.site._registry}
    assert registered == set(ADMIN_MODELS)


@pytest.fixture
def world(demo, client, on_commit, request):
    """An email review waiting on its interrupt (in ``support``), started by a signed webhook; for
    the reviews' own URLs also the ``client`` persona's review (in ``support``)."""
    with on_commit():
        response = post_webhook(client, {"complaint": COMPLAINT})
    session = WorkflowSession.objects.get(pk=response.json()["session_id"])
    item = Item.objects.get(session=session, status="pending")
    found = {"session": session.id, "item": item.pk, "interrupt": item.interrupt_id}
    callspec = getattr(request.node, "callspec", None)
    if callspec is not None and str(callspec.params.get("route", "")).startswith("api/v1/reviews/"):
        import json

        body = {"title": "Matrix", "message": "Check this", "queue": "support"}
        with on_commit():
            asked = persona_client("client").post("/api/v1/reviews", json.dumps(body), content_type="application/json")
        found["review"] = asked.json()["id"]
    return found


def _snapshot(world):
    item = Item.objects.get(pk=world["item"])
    session = WorkflowSession.objects.get(pk=world["session"])
    return (item.status, item.decided_by_label, session.status, session.version, WorkflowSession.objects.count())


def _cases():
    for route, checks in EXPECTATIONS.items():
        for n, check in enumerate(checks):
            for persona in PERSONAS:
                yield pytest.param(route, n, persona, id=f"{check.method} {route or '/'} as {persona}")


@pytest.mark.parametrize(("route", "n", "persona"), list(_cases()))
def test_the_matrix(world, route, n, persona, on_commit):
    check = EXPECTATIONS[route][n]
    expected = check.expect[persona]
    status, location = expected if isinstance(expected, tuple) else (expected, None)
    http = persona_client(persona)
    before = _snapshot(world)
    kwargs: dict[str, Any] = {}
    if check.method == "POST":
        if check.json:
            import json

            kwargs = {"data": json.dumps(check.data), "content_type": "application/json"}
        else:
            kwargs = {"data": check.data(world) if callable(check.data) else check.data}
            form = http.get(check.path(world)) if check.path(world).startswith("/new/") else None
            if form is not None and form.status_code == 200:  # sent as its form sends it
                kwargs["data"] = {**kwargs["data"], "start_token": form.context["start_token"]}
    with on_commit():
        response = getattr(http, check.method.lower())(check.path(world), **kwargs)
    assert response.status_code == status, response.content[:500]
    if location is not None:
        assert response["Location"].startswith(location), response["Location"]
    if (check.writes and status >= 300 and status != 302) or (check.writes and location == LOGIN[1]):
        assert _snapshot(world) == before, "a refused request changed the item or the session"
    if route == "api/v1/interrupts" and status == 200:
        assert response.json()["count"] == (1 if persona == "client" else 0)


def _admin_expect(persona: str, kind: str, view: str, internal: bool = False) -> Any:
    """The status of an admin view (changelist, add, change, delete, history) for a persona;
    ``internal``: a model only superusers see (``admin_site.INTERNAL``)."""
    if persona not in ("auditor", "staff", "admin"):
        return ADMIN_LOGIN
    if persona == "staff":  # staff may log in to the admin, but no permission opens a model
        return 403
    if persona == "auditor" and internal:
        return 403
    if persona == "auditor":
        return 200 if view in ("changelist", "change", "history") else 403
    if kind == "record":
        return 200 if view in ("changelist", "change", "history") else 403
    if kind == "axes":
        return 200 if view in ("changelist", "change", "history", "delete") else 403
    return 200


@pytest.mark.parametrize("persona", PERSONAS)
def test_the_admin_for(world, persona):
    http = persona_client(persona)
    for model, _ in admin.site._registry.items():
        kind = ADMIN_MODELS[model._meta.label_lower]
        base = f"/admin/{model._meta.app_label}/{model._meta.model_name}/"
        row = model._default_manager.first()
        views = {"changelist": base, "add": f"{base}add/"}
        if row is not None:
            views |= {
                "change": f"{base}{row.pk}/change/",
                "delete": f"{base}{row.pk}/delete/",
                "history": f"{base}{row.pk}/history/",
            }
        for view, url in views.items():
            expected = _admin_expect(persona, kind, view, model._meta.label_lower in INTERNAL)
            status, location = expected if isinstance(expected, tuple) else (expected, None)
            response = http.get(url)
            assert response.status_code == status, f"{persona} GET {url}: {response.status_code}, expected {status}"
            if location:
                assert response["Location"].startswith(location)
    index = http.get("/admin/")
    assert index.status_code == (200 if persona in ("auditor", "staff", "admin") else 302)


@pytest.mark.parametrize("persona", USERS)
def test_the_auditor_and_reviewers_cannot_post_to_admin_models(world, persona):
    if persona == "admin":
        return
    http = persona_client(persona)
    for model in admin.site._registry:
        base = f"/admin/{model._meta.app_label}/{model._meta.model_name}/"
        response = http.post(f"{base}add/", {})
        assert response.status_code in (302, 403), (persona, base, response.status_code)
        if response.status_code == 302:
            assert response["Location"].startswith("/admin/login/")
