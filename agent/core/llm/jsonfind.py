"""Finding the JSON object in a model's reply: fences, prose, braces in strings, trailing commas.

Linear in the reply's length whatever it holds, so a hostile or rambling reply cannot stall the
event loop the games share.
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Iterator
from typing import Any

MAX_JSON_CANDIDATES = 32
"""Objects tried with json.loads per text block: bounds the work whatever the reply holds."""

_FENCE = re.compile(r"```[ \t]*(?:json|JSON|json5)?[ \t]*\n?(.*?)```", re.DOTALL)


def extract_json(text: str | None) -> dict[str, Any] | None:
    """The first complete JSON object in a model's reply, or None.

    Copes with code fences, prose before and after, braces inside strings and trailing commas.
    A reply cut off mid-object gives None rather than one of its inner objects. Linear in the
    length of the text: the braces are matched in one pass, and at most MAX_JSON_CANDIDATES
    spans that can start an object (``{`` then ``"`` or ``}``) are handed to json.loads.
    """
    if not text:
        return None
    for block in _FENCE.findall(text):
        found, _ = _first_object(block)
        if found is not None:
            return found
    found, cut = _first_object(text)
    if found is None and not cut:
        # A lone double quote in the prose before the object ("a 5" side") makes the one pass take
        # the object for the inside of a string: look again from the first few places an object
        # could start. A bounded number of passes keeps this linear.
        for match in itertools.islice(_OBJECT_START.finditer(text), MAX_RESCANS):
            found, cut = _first_object(text, match.start())
            if found is not None or cut:
                break
    return found


_OBJECT_START = re.compile(r'\{\s*["}]')
MAX_RESCANS = 4


def _first_object(text: str, begin: int = 0) -> tuple[dict[str, Any] | None, bool]:
    """The first object from ``begin``, and whether the search stopped at an unterminated one."""
    tried = 0
    for start, end in _object_spans(text, begin):
        if end is None:
            return None, True  # unterminated: whatever follows is a fragment of it
        if tried >= MAX_JSON_CANDIDATES:
            return None, False
        tried += 1
        span = text[start:end]
        for candidate in (span, _drop_trailing_commas(span)):
            try:
                # strict=False: small models write raw newlines inside strings; refusing those
                # would hand the caller one of the object's inner objects instead.
                value = json.loads(candidate, strict=False)
            except (ValueError, RecursionError):
                continue
            if isinstance(value, dict):
                return value, False
        # Not JSON as a whole; an object may still sit inside (prose in braces): the next span.
    return None, False


def _object_spans(text: str, begin: int = 0) -> Iterator[tuple[int, int | None]]:
    """(start, end) of every ``{`` that can open a JSON object, in text order; end is None when
    the brace is never closed. One pass with a stack: brackets of either kind nest together."""
    closes: dict[int, int] = {}
    stack: list[int] = []
    for i, ch in scan_outside_strings(text, begin):
        if ch in "{[":
            stack.append(i)
        elif ch in "}]" and stack:
            closes[stack.pop()] = i + 1
    for i, ch in scan_outside_strings(text, begin):
        if ch != "{":
            continue
        j = i + 1
        while j < len(text) and text[j] in " \t\r\n":
            j += 1
        if j < len(text) and text[j] not in '"}':
            continue  # "{{", "{x": prose or a broken key, never the start of an object
        yield i, closes.get(i)
        if i not in closes:
            return


def scan_outside_strings(text: str, start: int = 0) -> Iterator[tuple[int, str]]:
    """(index, char) for every character outside JSON strings (an opening quote included, string
    contents and the closing quote skipped). A text that ends inside a string ends with
    ``(len(text), "")``, which matches no character a caller looks for."""
    in_string = escaped = False
    for i in range(start, len(text)):
        ch = text[i]
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
            continue
        if ch == '"':
            in_string = True
        yield i, ch
    if in_string:
        yield len(text), ""


_TRAILING_COMMA = re.compile(r",\s*[}\]]")


def _drop_trailing_commas(text: str) -> str:
    if not _TRAILING_COMMA.search(text):
        return text  # the common case, found at C speed
    drop = set()
    for i, ch in scan_outside_strings(text):
        if ch == ",":
            j = i + 1
            while j < len(text) and text[j].isspace():
                j += 1
            if j < len(text) and text[j] in "}]":
                drop.add(i)
    if not drop:
        return text
    return "".join(ch for i, ch in enumerate(text) if i not in drop)
