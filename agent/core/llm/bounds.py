"""Bounded answers: every free-text field gets a length the model is told and, where the endpoint
enforces schemas with a grammar, cannot pass; the reply's ``max_tokens`` is sized to the schema; an
answer cut off at ``max_tokens`` is salvaged when its decision fields are complete.

A small model writes its ``reasoning`` until ``max_tokens`` runs out and the JSON never closes. A
``maxLength`` in the schema stops it in the llama.cpp family (its grammar counts characters); OpenAI's
strict mode refuses the keyword, so there the bound is words in the field's description only, and the
game's schemas themselves stay strict-clean.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from typing import Any

from agent.core.llm.gbnf import schema_grammar
from agent.core.llm.jsonfind import extract_json, scan_outside_strings

DEFAULT_FIELD = "*"
CHARS_PER_TOKEN_WORST = 2.5
"""Free text a small model writes can be denser than English prose: budget tokens generously."""
KEY_TOKENS = 4
REPLY_OVERHEAD_TOKENS = 24
NUMBER_TOKENS = 6
UNBOUNDED_ARRAY_ITEMS = 8
MIN_REPLY_TOKENS = 48
GRAMMAR_SPACE_TOKENS = 22
"""llama.cpp's schema grammars allow, between any two JSON tokens, a space or one or two line breaks
and up to 20 spaces and tabs. A small model under that grammar sometimes writes the whole run
(``{\n\t\t\t\t ...``), a token a character at worst: room for it at every place the grammar allows,
or the decision is cut off at ``max_tokens`` behind the whitespace."""


def is_free_text(node: Any) -> bool:
    """A string field the model writes freely (no enum, no const)."""
    if not isinstance(node, dict) or "enum" in node or "const" in node:
        return False
    kind = node.get("type")
    return kind == "string" or (isinstance(kind, list) and "string" in kind)


def _limit(name: str, field_chars: dict[str, int]) -> int:
    return field_chars.get(name, field_chars.get(DEFAULT_FIELD, 200))


def bound_schema(schema: dict[str, Any], field_chars: dict[str, int], *, grammar: bool,
                 say: Callable[[int], str], scale: float = 1.0) -> dict[str, Any]:
    """A copy of ``schema`` whose free-text properties say their bound in their description (``say(n)``)
    and, when ``grammar``, carry it as ``maxLength``. ``scale`` tightens every bound (a re-ask after a cut)."""
    out = copy.deepcopy(schema)

    def visit(node: Any) -> None:
        if not isinstance(node, dict):
            return
        for name, sub in (node.get("properties") or {}).items():
            if is_free_text(sub):
                n = max(16, int(_limit(name, field_chars) * scale))
                said = say(n)
                sub["description"] = f"{sub['description']} {said}" if sub.get("description") else said
                if grammar:
                    sub["maxLength"] = min(n, int(sub.get("maxLength", n)))
            else:
                visit(sub)
        for key in ("anyOf", "oneOf", "allOf"):
            for sub in node.get(key) or []:
                visit(sub)
        visit(node.get("items"))
        for sub in (node.get("$defs") or {}).values():
            visit(sub)

    visit(out)
    return out


def reply_tokens(schema: dict[str, Any], field_chars: dict[str, int], *, grammar: bool = False) -> int:
    """The most tokens an answer that keeps to ``schema`` and its bounds should need; with ``grammar``
    (llama.cpp's converter holds the answer to the schema) also the whitespace that grammar allows."""
    defs = schema.get("$defs") or {}
    # Under the grammar: one run of whitespace after the key, the colon and the value of every member,
    # after every "{", "[" and ","; without it none is budgeted (free models write compact or pretty
    # JSON, which the overheads cover).
    space = GRAMMAR_SPACE_TOKENS if grammar else 0

    def size(node: Any, name: str, depth: int) -> float:
        if not isinstance(node, dict) or depth > 12:
            return NUMBER_TOKENS
        if "$ref" in node:
            return size(defs.get(str(node["$ref"]).rsplit("/", 1)[-1]), name, depth + 1)
        if "enum" in node:
            return max((len(json.dumps(v)) for v in node["enum"]), default=4) / 3 + 2
        if "const" in node:
            return len(json.dumps(node["const"])) / 3 + 2
        branches = node.get("anyOf") or node.get("oneOf")
        if branches:
            return max(size(b, name, depth + 1) for b in branches)
        kind = node.get("type")
        kind = next((k for k in kind if k != "null"), "null") if isinstance(kind, list) else kind
        if kind == "object":
            return sum(KEY_TOKENS + len(k) / 3 + 4 * space + size(sub, k, depth + 1)
                       for k, sub in (node.get("properties") or {}).items()) + 2 + 2 * space
        if kind == "array":
            items = int(node.get("maxItems", UNBOUNDED_ARRAY_ITEMS))
            return items * (size(node.get("items"), name, depth + 1) + 1 + 2 * space) + 2 + 2 * space
        if kind == "string":
            return _limit(name, field_chars) / CHARS_PER_TOKEN_WORST + 2
        return NUMBER_TOKENS

    return int(size(schema, "", 0)) + REPLY_OVERHEAD_TOKENS


def bound_request(schema: dict[str, Any], mode: str, field_chars: dict[str, int], *, scale: float, limit: int,
                  our_grammar: bool, say: Callable[[int], str]) -> tuple[dict[str, Any], int, str | None]:
    """What a call sends for ``schema`` in ``mode``: the schema with its free text bounded, the reply's
    max_tokens (at most ``limit``), and the grammar of ours sent instead of the schema (``our_grammar``:
    llama-server), if the schema becomes one. ``scale`` shrinks every bound (a re-ask after a cut)."""

    def bounded_by(held: bool) -> dict[str, Any]:
        return bound_schema(schema, field_chars, grammar=held, scale=scale, say=say)

    grammar = None
    if our_grammar and mode in ("json_schema", "json_object_schema"):
        bounded = bounded_by(True)
        grammar = schema_grammar(bounded)  # None: a schema it does not cover goes the server's way
    if grammar is None:
        bounded = bounded_by(mode == "json_object_schema")
    # llama.cpp's own grammar (the schema sent in its form) allows whitespace runs: room for them.
    # Where a grammar holds the bounds the answer's size is known; elsewhere the model is only
    # told, so it gets twice the room before a cut.
    server_grammar = grammar is None and mode == "json_object_schema"
    needed = reply_tokens(bounded, {k: int(v * scale) for k, v in field_chars.items()}, grammar=server_grammar)
    held = grammar is not None or server_grammar
    return bounded, min(limit, max(MIN_REPLY_TOKENS, needed if held else 2 * needed)), grammar


def salvage(text: str, schema: dict[str, Any]) -> dict[str, Any] | None:
    """The object in a reply cut off at ``max_tokens``, when every field that decides (everything but
    free text) is complete; free text is kept as far as it got (a missing one is empty). None when a
    deciding field is missing or was the one cut."""
    start = text.find("{")
    if start < 0:
        return None
    closed = _close(text[start:])
    if closed is None:
        return None
    body, cut_value = closed
    data = extract_json(body)
    if data is None:
        return None
    properties = schema.get("properties") or {}
    if cut_value and data and not is_free_text(properties.get(list(data)[-1])):
        return None  # the cut fell inside a deciding value: never play half a word
    for name, sub in properties.items():
        if name in data:
            continue
        if is_free_text(sub):
            data[name] = ""
        elif name in (schema.get("required") or []):
            return None
    return data


def _close(fragment: str) -> tuple[str, bool] | None:
    """``fragment`` (a JSON object cut short) closed, and whether a top-level string value was cut in
    the middle (kept as far as it got). Anything cut deeper is dropped back to the last complete
    top-level member. None when nothing usable is left."""
    stack: list[str] = []
    in_string = False
    last_member_end = 0  # index of the last top-level comma: every member before it is complete
    for i, ch in scan_outside_strings(fragment):
        if ch == "":
            in_string = True  # the fragment ends inside a string
        elif ch in "{[":
            stack.append("}" if ch == "{" else "]")
        elif ch in "}]":
            if not stack:
                return None
            stack.pop()
            if not stack:
                return fragment[: i + 1], False  # it was complete after all
        elif ch == "," and len(stack) == 1:
            last_member_end = i
    if not stack:
        return None
    if in_string and len(stack) == 1:
        candidate = fragment.removesuffix("\\") + '"}'
        if extract_json(candidate) is not None and _value_was_cut(fragment):
            return candidate, True
    head = fragment[:last_member_end] if last_member_end else "{"
    return head + "}", False


def _value_was_cut(fragment: str) -> bool:
    """Whether the open string at the end of ``fragment`` is a value (after ``:``), not a key."""
    quote = fragment.rfind('"')
    while quote > 0 and fragment[quote - 1] == "\\":
        quote = fragment.rfind('"', 0, quote - 1)
    return fragment[:quote].rstrip().endswith(":")
