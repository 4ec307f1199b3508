"""The request as the wire carries it, for one structured-output mode: pure functions, no I/O."""

from __future__ import annotations

import re
from typing import Any

from agent.core.llm.result import Mode


def schema_name(name: str) -> str:
    """``name`` as OpenAI accepts it: [a-zA-Z0-9_-]{1,64}."""
    return re.sub(r"[^a-zA-Z0-9_-]", "_", name)[:64] or "reply"


def with_schema_note(messages: list[dict[str, Any]], note: str) -> list[dict[str, Any]]:
    """``messages`` with ``note`` (the schema in words) added to the first system message, or a
    system message of its own first; without a server-enforced schema (any mode but json_schema)
    the model must be told the shape. Some chat templates allow only one system message, first."""
    out = [dict(m) for m in messages]
    for message in out:
        if message.get("role") == "system":
            content = message.get("content")
            if isinstance(content, list):
                message["content"] = [*content, {"type": "text", "text": note}]
            else:
                message["content"] = f"{content or ''}\n\n{note}".strip()
            return out
    return [{"role": "system", "content": note}, *out]


def build_request(model: str, messages: list[dict[str, Any]], schema: dict[str, Any] | None, name: str,
                  mode: Mode, *, max_tokens: int, temperature: float | None, limit_key: str,
                  grammar: str | None = None) -> dict[str, Any]:
    """The Chat Completions body; ``temperature`` None leaves it out (models that refuse it).
    ``grammar`` (GBNF, for llama-server only) replaces the schema: that server takes one or the other."""
    request: dict[str, Any] = {"model": model, limit_key: max_tokens}
    if temperature is not None:
        request["temperature"] = temperature
    if grammar is not None:
        request["extra_body"] = {"grammar": grammar}
    elif schema is not None and mode == "json_schema":
        request["response_format"] = {"type": "json_schema", "json_schema": {
            "name": schema_name(name), "schema": schema, "strict": True}}
    elif schema is not None and mode == "json_object_schema":
        # The llama.cpp family's form: its server turns the schema into a grammar. OpenAI refuses
        # the unknown field, so this is sent only to an endpoint that refused json_schema.
        request["response_format"] = {"type": "json_object", "schema": schema}
    elif schema is not None and mode == "json_object":
        request["response_format"] = {"type": "json_object"}
    request["messages"] = messages
    return request
