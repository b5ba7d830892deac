"""The admin timeline reads: its stylesheet is on the page ("State change" as wide as "What"), and the
word diff of a revised draft keeps a space between deleted words and the ones that replace them."""

from __future__ import annotations

import re
from pathlib import Path

from django.contrib.staticfiles import finders

from reviewconsole.console.timeline import Revision, revision_diff
from reviewconsole.inbox.items.decisions import interrupt_decide

SESSIONS = "/admin/workflow_sessions/workflowsession/"


def _shown(old, new):
    return Revision("draft", revision_diff(old, new)).shown


def test_replaced_words_are_apart():
    assert _shown("Thank you for this.", "Thank you about this.") == [
        ("=", "Thank you "),
        ("-", "for"),
        (" ", " "),
        ("+", "about"),
        ("=", " this."),
    ]
    text = "".join(t for _, t in _shown("We are sorry for the trouble.", "We apologise for this."))
    assert "sorryapologise" not in text and "thethis" not in text


def test_a_pure_insertion_or_deletion_gets_no_extra_space():
    assert (" ", " ") not in _shown("a b c", "a b x c")
    assert (" ", " ") not in _shown("a b c", "a c")


def test_the_session_page_loads_the_timeline_styles_and_shows_the_diff_apart(
    client, auditor, manager, start_review, on_commit
):
    session, first = start_review()
    with on_commit():
        interrupt_decide(interrupt=first, user=manager, action="revise", text="shorter")
    client.force_login(auditor)
    page = client.get(f"{SESSIONS}{session.id}/change/").content.decode()
    assert '<link rel="stylesheet" href="/static/console/admin.css">' in page  # every admin page (base_site.html)
    assert '<th class="state-change">State change</th>' in page
    assert re.search(r"</del> <ins>", page)  # a deletion and its replacement, apart
    assert not re.search(r"</del><ins", page)
    css = Path(finders.find("console/admin.css")).read_text()
    assert "table.timeline { width: 100%; table-layout: fixed; }" in css  # the columns keep their widths
    assert "table.timeline th:nth-child(5), table.timeline th.state-change { width: auto; }" in css
