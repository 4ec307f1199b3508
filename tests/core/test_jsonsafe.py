"""Peer JSON bounded in depth: refused with a reason before anything recurses (issue 22)."""

from __future__ import annotations

import json

import pytest

from agent.core.jsonsafe import JSONDepthError, loads, nesting_depth


@pytest.mark.parametrize("text", ["[" * 100_000 + "]" * 100_000, '{"a":' * 50_000 + "1" + "}" * 50_000,
                                  "[" * 200_000, b"[" * 100_000 + b"]" * 100_000])
def test_deep_nesting_is_a_depth_error_not_a_recursion_error(text) -> None:
    with pytest.raises(JSONDepthError, match="nested more than 64 levels"):
        loads(text)


def test_brackets_inside_strings_do_not_count() -> None:
    text = json.dumps({"a": "[" * 500, "b": ['"]]' * 100, "\\[" * 100], "c": [[[1]]]})
    assert nesting_depth(text, 10) == 4  # the object and "c"'s three lists
    assert loads(text, max_depth=4)["c"] == [[[1]]]
    with pytest.raises(JSONDepthError):
        loads(text, max_depth=3)


def test_exact_depth_limit() -> None:
    assert loads("[" * 64 + "]" * 64) is not None
    with pytest.raises(JSONDepthError):
        loads("[" * 65 + "]" * 65)


@pytest.mark.parametrize("text", ['"' + "[" * 1000, '"\\"' * 1000 + "[" * 100, "[" * 100 + "\\"])
def test_unterminated_strings_and_stray_escapes_are_plain_errors(text) -> None:
    with pytest.raises(ValueError):
        loads(text)


def test_ordinary_errors_stay_value_errors() -> None:
    for bad in ("{", "nope", b"\xff\xfe", "1" * 5000):
        with pytest.raises(ValueError):
            loads(bad)
    assert loads(b'{"x": [1, 2]}') == {"x": [1, 2]}
