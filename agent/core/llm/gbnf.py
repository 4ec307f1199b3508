"""A JSON schema as a GBNF grammar with tight whitespace, for llama.cpp's ``llama-server``.

That server turns a schema (``response_format``) into a grammar that allows, between any two JSON
tokens, a line break and up to 20 spaces and tabs. Small models take the offer: Gemma 3 270M wrote
``{\\n\\t\\t\\t\\t...`` at every separator and ran out of ``max_tokens`` (or of the decision's time)
before its decision. The grammar made here allows one space at most, which every JSON reader accepts.

It covers what the games' schemas use: objects (every property written, in the schema's order:
models write fields in that order and ``reasoning`` comes first), strings with ``maxLength``,
``enum``/``const``, integers (a small ``minimum``..``maximum`` range as its values), numbers,
booleans, null, type lists, ``anyOf``/``oneOf``, arrays with ``minItems``/``maxItems``, and local
``$ref``s. Anything else makes :func:`schema_grammar` return None: the caller sends the schema as the
server's own ``response_format`` instead. Pure; no I/O.
"""

from __future__ import annotations

import json
from typing import Any

IGNORED = frozenset({"description", "title", "default", "examples", "additionalProperties", "required",
                     "$schema", "$comment", "strict"})
"""Keywords that do not change what the grammar must allow (every property is written, extra ones never)."""
MAX_INT_VALUES = 64
"""An integer range up to this many values is spelt out; a wider one is any integer (the game checks it)."""
MAX_ARRAY_ITEMS = 64
"""Beyond this (or with no maxItems) an array's length is left open."""

BASE_RULES = {
    "ws": '" "?',
    "char": r'[^"\\\x7F\x00-\x1F] | "\\" (["\\/bfnrt] | "u" [0-9a-fA-F]{4})',
    "string": r'"\"" char* "\""',
    "integer": r'"-"? ([0-9] | [1-9] [0-9]{1,15})',
    # digits bounded: a small model otherwise writes zeros after the point until max_tokens
    "number": r'"-"? ([0-9] | [1-9] [0-9]{1,15}) ("." [0-9]{1,15})? ([eE] [-+]? [0-9]{1,3})?',
    "boolean": '"true" | "false"',
    "null": '"null"',
}


class Unsupported(Exception):
    """The schema uses a keyword this converter does not turn into a grammar."""


def literal(text: str) -> str:
    """``text`` as a GBNF string literal."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\r", "\\r") \
        .replace("\t", "\\t") + '"'


def json_literal(value: Any) -> str:
    """A JSON value (an enum's or a const's) as the literal that writes it."""
    return literal(json.dumps(value, ensure_ascii=False, separators=(",", ":")))


class _Builder:
    def __init__(self, schema: dict[str, Any]) -> None:
        self.defs: dict[str, Any] = schema.get("$defs") or schema.get("definitions") or {}
        self.rules: dict[str, str] = {}
        self.by_body: dict[str, str] = {}
        self.refs: dict[str, str] = {}

    def rule(self, body: str, hint: str) -> str:
        """A named rule for ``body`` (one name per distinct body)."""
        if body not in self.by_body:
            name = f"{hint}-{len(self.by_body) + 1}"
            self.by_body[body] = name
            self.rules[name] = body
        return self.by_body[body]

    def value(self, node: Any, depth: int = 0) -> str:
        """The GBNF expression for one schema node."""
        if depth > 32:
            raise Unsupported("schema nested too deep")
        if node is True or node == {}:
            raise Unsupported("a value of any shape")
        if not isinstance(node, dict):
            raise Unsupported(f"schema node {node!r}")
        unknown = set(node) - IGNORED - {"type", "properties", "items", "enum", "const", "anyOf", "oneOf",
                                          "$ref", "maxLength", "minLength", "minimum", "maximum",
                                          "minItems", "maxItems", "$defs", "definitions"}
        if unknown:
            raise Unsupported(f"keywords {sorted(unknown)}")
        if "$ref" in node:
            return self.ref(str(node["$ref"]), depth)
        if "const" in node:
            return json_literal(node["const"])
        if "enum" in node:
            return "(" + " | ".join(json_literal(v) for v in node["enum"]) + ")"
        branches = node.get("anyOf") or node.get("oneOf")
        if branches:
            return "(" + " | ".join(self.value(b, depth + 1) for b in branches) + ")"
        kind = node.get("type")
        if isinstance(kind, list):
            return "(" + " | ".join(self.value({**node, "type": k}, depth + 1) for k in kind) + ")"
        if kind == "object":
            return self.rule(self.object(node, depth), "object")
        if kind == "array":
            return self.rule(self.array(node, depth), "array")
        if kind == "string":
            return self.string(node)
        if kind == "integer":
            return self.integer(node)
        if kind in ("number", "boolean", "null"):
            return kind
        raise Unsupported(f"type {kind!r}")

    def ref(self, ref: str, depth: int) -> str:
        prefix = next((p for p in ("#/$defs/", "#/definitions/") if ref.startswith(p)), None)
        if prefix is None or ref[len(prefix):] not in self.defs:
            raise Unsupported(f"$ref {ref!r}")
        if ref not in self.refs:
            name = f"def-{len(self.refs) + 1}"
            self.refs[ref] = name
            self.rules[name] = self.value(self.defs[ref[len(prefix):]], depth + 1)
        return self.refs[ref]

    def object(self, node: dict[str, Any], depth: int) -> str:
        properties = node.get("properties") or {}
        if not properties:
            return '"{" ws "}"'
        members = [f'{json_literal(name)} ws ":" ws {self.value(sub, depth + 1)}' for name, sub in properties.items()]
        return '"{" ws ' + ' ws "," ws '.join(members) + ' ws "}"'

    def array(self, node: dict[str, Any], depth: int) -> str:
        if "items" not in node:
            raise Unsupported("an array without items")
        item = self.value(node["items"], depth + 1)
        low, high = int(node.get("minItems", 0)), node.get("maxItems")
        high = None if high is None or int(high) > MAX_ARRAY_ITEMS else int(high)
        if high == 0:
            return '"[" ws "]"'
        body = f'{item} (ws "," ws {item}){{{max(low - 1, 0)},{"" if high is None else high - 1}}}'
        return f'"[" ws {body} ws "]"' if low > 0 else f'"[" ws ({body})? ws "]"'

    def string(self, node: dict[str, Any]) -> str:
        low, high = int(node.get("minLength", 0)), node.get("maxLength")
        if high is None and low == 0:
            return "string"
        return self.rule(f'"\\"" char{{{low},{"" if high is None else int(high)}}} "\\""', "string")

    def integer(self, node: dict[str, Any]) -> str:
        low, high = node.get("minimum"), node.get("maximum")
        if isinstance(low, int) and isinstance(high, int) and 0 <= high - low < MAX_INT_VALUES:
            return "(" + " | ".join(f'"{v}"' for v in range(low, high + 1)) + ")"
        return "integer"


def schema_grammar(schema: dict[str, Any]) -> str | None:
    """The GBNF grammar of the answers ``schema`` allows, with at most one space between tokens;
    None when the schema uses something this converter does not cover."""
    builder = _Builder(schema)
    try:
        root = builder.value(schema)
    except (Unsupported, TypeError, ValueError):
        return None
    rules = {"root": root, **builder.rules, **BASE_RULES}
    return "\n".join(f"{name} ::= {body}" for name, body in rules.items()) + "\n"
