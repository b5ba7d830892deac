"""``reviewconsole.json_input``: the one check every door runs on outside JSON before storing it."""

from __future__ import annotations

import json

import pytest

from reviewconsole.json_input import UnstorableValueError, check_storable, loads


@pytest.mark.parametrize(
    ("text", "path", "problem"),
    [
        ('{"complaint": "a\\u0000b"}', ["complaint"], "contains a NUL character (U+0000)"),
        ('{"a": [1, {"b\\u0000": 2}]}', ["a", 1], "has a key that contains a NUL character (U+0000)"),
        ('{"a": "\\ud800"}', ["a"], "contains an unpaired surrogate"),
        ('{"result": 1e400}', ["result"], "is not a finite number"),
        ("[-1e400]", [0], "is not a finite number"),
        ('"\\u0000"', [], "contains a NUL character (U+0000)"),
    ],
)
def test_it_refuses_what_no_database_column_holds_and_says_where(text, path, problem):
    with pytest.raises(UnstorableValueError) as caught:
        loads(text)
    assert (caught.value.path, caught.value.problem) == (path, problem)
    assert caught.value.errors == [{"path": path, "message": caught.value.message}]


@pytest.mark.parametrize("text", ['{"a": NaN}', "Infinity", "[-Infinity]"])
def test_nan_and_infinity_literals_are_not_json(text):
    with pytest.raises(ValueError, match="is not JSON"):
        loads(text)


def test_it_passes_ordinary_json_through():
    text = '{"complaint": "caf\\u00e9 \\ud83d\\ude00", "n": [1, 2.5, -0.0, 1e308], "ok": true, "x": null}'
    assert loads(text) == json.loads(text)


def test_it_walks_the_deepest_nesting_json_parses_without_exhausting_the_stack():
    deep = "[" * 900 + '"\\u0000"' + "]" * 900
    with pytest.raises(UnstorableValueError) as caught:
        loads(deep)
    assert caught.value.path == [0] * 900


def test_a_path_prefix_names_the_field():
    with pytest.raises(UnstorableValueError, match=r"^input\.complaint contains a NUL"):
        check_storable({"complaint": "\x00"}, ["input"])
