"""Random instances of a JSON schema (the fake OpenAI server's random-schema mode)."""

from __future__ import annotations

import json
import random
from collections import Counter

import openai

from agent.core.testing.fake_openai import FakeOpenAI
from agent.core.testing.random_schema import RandomSchemaOptions, random_instance, request_schema

SCHEMA = {
    "type": "object", "additionalProperties": False, "required": ["kind", "name", "size", "count", "tags", "ok"],
    "$defs": {"Size": {"type": "number", "minimum": 1, "maximum": 3}},
    "properties": {
        "kind": {"type": "string", "enum": ["a", "b", "c"]},
        "name": {"anyOf": [{"type": "string"}, {"type": "null"}]},
        "size": {"$ref": "#/$defs/Size"},
        "count": {"type": ["integer", "null"], "minimum": 0, "maximum": 5},
        "tags": {"type": "array", "items": {"type": "string", "enum": ["x", "y"]}, "minItems": 1, "maxItems": 2},
        "ok": {"type": "boolean"},
    },
}


def test_every_instance_keeps_to_the_schema_and_every_option_occurs():
    rng = random.Random(3)
    kinds: Counter[str] = Counter()
    nulls = 0
    for _ in range(600):
        value = random_instance(SCHEMA, rng)
        assert set(value) == set(SCHEMA["properties"])
        assert value["kind"] in ("a", "b", "c") and 1 <= value["size"] <= 3 and isinstance(value["ok"], bool)
        assert value["count"] is None or (isinstance(value["count"], int) and 0 <= value["count"] <= 5)
        assert 1 <= len(value["tags"]) <= 2 and set(value["tags"]) <= {"x", "y"}
        kinds[value["kind"]] += 1
        nulls += value["name"] is None
    assert min(kinds.values()) > 150 and 200 < nulls < 400  # uniform enums, null_rate 0.5


def test_null_rate_and_enum_weights_shape_the_answers():
    rng = random.Random(4)
    options = RandomSchemaOptions(null_rate=0.0, enum_weights={"kind": {"a": 0.0}})
    values = [random_instance(SCHEMA, rng, options) for _ in range(300)]
    assert all(v["name"] is not None and v["count"] is not None and v["kind"] != "a" for v in values)


def test_the_same_seed_gives_the_same_answers():
    assert [random_instance(SCHEMA, random.Random(9)) for _ in range(3)] == \
        [random_instance(SCHEMA, random.Random(9)) for _ in range(3)]


def test_request_schema_reads_response_format():
    body = {"response_format": {"type": "json_schema", "json_schema": {"name": "m", "schema": SCHEMA}}}
    assert request_schema(body) is SCHEMA
    assert request_schema({"response_format": {"type": "json_object"}}) is None and request_schema({}) is None


async def test_the_fake_answers_random_instances_of_the_requested_schema():
    async with FakeOpenAI(random_schema=RandomSchemaOptions(), seed=5) as fake:
        sdk = openai.AsyncOpenAI(api_key="x", base_url=fake.base_url, max_retries=0)
        fmt = {"type": "json_schema", "json_schema": {"name": "m", "schema": SCHEMA, "strict": True}}
        reply = await sdk.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}],
                                                  response_format=fmt)  # type: ignore[call-overload]
        plain = await sdk.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}])
        await sdk.close()
    assert set(json.loads(reply.choices[0].message.content or "")) == set(SCHEMA["properties"])
    assert plain.choices[0].message.content == '{"ok": true}'  # no schema: the default reply
