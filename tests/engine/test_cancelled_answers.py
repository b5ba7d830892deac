"""The cancelled answer (ADK 2.11's synthesized abort response, AG-UI 1.0's ``status: "cancelled"``):
every interrupt may receive it, whatever its schema, and the workflows' readers say it was a cancel."""

from __future__ import annotations

import pytest

from engine import AnswerInvalidError, InterruptKind, cancelled_answer, is_cancelled_answer, normalize_answer
from reviewconsole.workflows.answers import read_review, read_yes_no

FORM = {"type": "object", "properties": {"severity": {"enum": ["low", "high"]}}, "required": ["severity"]}


def test_the_shapes_per_kind():
    assert cancelled_answer(InterruptKind.INPUT, "why") == {"cancelled": True, "reason": "why"}
    assert cancelled_answer(InterruptKind.INPUT) == {"cancelled": True}
    assert cancelled_answer(InterruptKind.CONFIRMATION) == {"confirmed": False, "cancelled": True}
    assert cancelled_answer(InterruptKind.LONG_RUNNING, "x") == {"status": "cancelled", "reason": "x"}
    for kind in (InterruptKind.INPUT, InterruptKind.CONFIRMATION, InterruptKind.LONG_RUNNING):
        assert is_cancelled_answer(cancelled_answer(kind, "r"))


@pytest.mark.parametrize(
    "value",
    [
        {"cancelled": False},
        {"cancelled": True, "extra": 1},
        {"cancelled": True, "reason": 3},
        {"status": "done"},
        "cancelled",
        {},
    ],
)
def test_other_values_are_not_a_cancel(value):
    assert not is_cancelled_answer(value)


def test_a_form_interrupt_takes_a_cancel_but_not_other_answers_off_its_schema():
    assert normalize_answer(InterruptKind.INPUT, {"cancelled": True, "reason": "r"}, FORM) == {
        "cancelled": True,
        "reason": "r",
    }
    with pytest.raises(AnswerInvalidError):
        normalize_answer(InterruptKind.INPUT, {"cancelled": True, "extra": 1}, FORM)


def test_a_cancelled_confirmation_declines_the_call():
    assert (
        normalize_answer(InterruptKind.CONFIRMATION, cancelled_answer(InterruptKind.CONFIRMATION), None)["confirmed"]
        is False
    )


def test_the_readers_say_it_was_a_cancel_with_its_reason():
    review = read_review({"cancelled": True, "reason": " Withdrawn "})
    assert (review.action, review.cancelled, review.reason) == ("reject", True, "Withdrawn")
    yes_no = read_yes_no(cancelled_answer(InterruptKind.CONFIRMATION, "no longer needed"))
    assert (yes_no.action, yes_no.cancelled, yes_no.reason) == ("reject", True, "no longer needed")
    assert not read_review("reject").cancelled
