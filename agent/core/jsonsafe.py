"""JSON from peers, bounded in nesting depth as well as in size.

``json.loads`` recurses once per level: 100,000 nested arrays in a 200 KB frame (well under any
size limit) raise ``RecursionError``, which callers catching ``ValueError`` let escape, and a
value thousands of levels deep breaks every later walk of it (pydantic, repr, the transcript).
:func:`loads` checks the depth in one linear pass over the text first, so a deep frame is
refused with a reason before anything recurses.
"""

from __future__ import annotations

import json
import re
from typing import Any

MAX_DEPTH = 64
"""Nesting levels any peer's JSON may have; every real message of every game needs under 10."""

# A string runs to its closing quote, or to the end when it has none: every position is read once.
_TOKENS = re.compile(r'"(?:[^"\\]|\\[\s\S])*"?|[\[\]{}]')


class JSONDepthError(ValueError):
    """JSON nested more deeply than allowed (a ValueError, as json.loads' own errors are)."""


def nesting_depth(text: str | bytes, limit: int) -> int:
    """The deepest bracket nesting in ``text`` outside strings, or a bound on it: at most
    ``limit`` means the text is no deeper than ``limit``; over it means it is deeper.

    Linear and recursion-free: strings are skipped whole, so brackets inside them do not count.
    """
    if isinstance(text, bytes):
        text = text.decode("latin-1")  # brackets and quotes are ASCII: any byte maps to one character
    opens = text.count("[") + text.count("{")
    if opens <= limit:
        return opens  # cannot be deeper than the number of brackets: the common case costs two counts
    depth = deepest = 0
    for match in _TOKENS.finditer(text):
        first = match.group()[0]
        if first in "[{":
            depth += 1
            if depth > deepest:
                deepest = depth
                if deepest > limit:
                    return deepest
        elif first in "]}":
            depth -= 1
    return deepest


def loads(text: str | bytes, *, max_depth: int = MAX_DEPTH, **kwargs: Any) -> Any:
    """``json.loads`` that refuses nesting beyond ``max_depth`` with :class:`JSONDepthError`.

    Other malformed input raises ValueError (``json.JSONDecodeError``, ``UnicodeDecodeError``,
    or Python's limit on integer digits), as ``json.loads`` does.
    """
    if nesting_depth(text, max_depth) > max_depth:
        raise JSONDepthError(f"JSON nested more than {max_depth} levels deep")
    try:
        return json.loads(text, **kwargs)
    except RecursionError:  # a nesting the scan could not see (it cannot happen, but must not escape)
        raise JSONDepthError(f"JSON nested more than {max_depth} levels deep") from None
