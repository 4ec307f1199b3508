"""The LLM client and ``--check-llm`` against llama-cpp-python serving Gemma 3 270M: the requests it
accepts, the dialect the client finds, and the prompt the server really counts."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent.core.config import GameConfig, LLMConfig, load_config
from agent.core.llm import LLMClient
from agent.core.llm.check import check_llm
from agent.core.llm.dialect import estimate_tokens
from agent.core.local_model import MODEL_ALIAS, LocalModelServer
from agent.games.tangram.config import Config
from agent.games.tangram.llm_player.sample import llm_sample
from tests.llm_real.conftest import FIRST_FORM, SERVER_KIND

ROOT = Path(__file__).resolve().parents[2]
# A first request to a 270M model on two busy cores reads a 2,500-token prompt in up to a minute.
pytestmark = [pytest.mark.real_llm, pytest.mark.timeout(900)]
SCHEMA = {"type": "object", "properties": {"reasoning": {"type": "string", "maxLength": 80},
                                           "piece": {"type": "string", "enum": ["Red", "Blue", "Green"]}},
          "required": ["reasoning", "piece"], "additionalProperties": False}


def local(config: GameConfig, server: LocalModelServer) -> GameConfig:
    """A shipped config changed only where a user would: base_url, model, no key."""
    llm = config.llm.model_copy(update={"base_url": server.base_url, "model": MODEL_ALIAS,
                                        "api_key_required": False})
    return config.model_copy(update={"llm": llm})


def client_for(server: LocalModelServer, **llm: object) -> LLMClient:
    return LLMClient(LLMConfig(base_url=server.base_url, model=MODEL_ALIAS, api_key_required=False,
                               max_tokens=64, temperature=0.0, request_timeout=120, **llm), None)


async def test_json_schema_is_refused_once_and_the_llama_cpp_form_is_kept(local_llm: LocalModelServer) -> None:
    if SERVER_KIND != "llama-cpp-python":
        pytest.skip(f"{SERVER_KIND} takes json_schema")
    async with client_for(local_llm) as client:
        messages = [{"role": "system", "content": "You pick a tangram piece."},
                    {"role": "user", "content": "Which piece goes on top? Pick one."}]
        first = await client.complete_json(messages, SCHEMA, "pick")
        second = await client.complete_json(messages, SCHEMA, "pick")
    assert first.ok and second.ok, (first.error, second.error)
    assert first.data is not None and first.data["piece"] in ("Red", "Blue", "Green")  # the grammar held
    assert [a.mode for a in first.attempts] == ["json_schema", "json_object_schema"]
    assert first.attempts[0].status == 500  # what llama-cpp-python answers json_schema with
    assert [a.mode for a in second.attempts] == ["json_object_schema"]  # remembered: no second refusal
    assert client.refused_requests == 1


async def test_the_probe_finds_what_this_server_drops(local_llm: LocalModelServer) -> None:
    async with client_for(local_llm) as client:
        dialect = await client.ensure_dialect(images=True)
    assert dialect.probed == "probed"
    # Which server it is, from what it tells when asked: llama-server takes our grammar, and
    # llama-cpp-python (one request at a time, each begun answered whole) gets decisions' requests
    # bounded by their deadline instead of request_timeout.
    assert client.endpoint.llama_server is (SERVER_KIND == "llama-server")
    assert client.endpoint.finishes_abandoned is (SERVER_KIND == "llama-cpp-python")
    # A text-only model on this server: a list of parts never arrives, so no picture is sent.
    assert not dialect.sends_images
    assert dialect.system in ("kept", "folded")


async def test_a_whole_tangram_play_prompt_arrives(local_llm: LocalModelServer) -> None:
    config = local(load_config(ROOT / "configs" / "gpt4o.yaml", Config), local_llm)
    assert isinstance(config, Config)
    sample = llm_sample(config)
    async with LLMClient(config.llm.model_copy(update={"max_tokens": 48, "request_timeout": 180}), None) as client:
        result = await client.complete_json(sample.messages, sample.schema, sample.schema_name)
    assert result.prompt_estimate >= estimate_tokens(sample.messages)  # the schema in words was added
    # The server's own count: the whole text arrived (at least 80 % of our estimate), not 7 tokens.
    assert result.prompt_tokens >= 0.8 * result.prompt_estimate > 400, (result.prompt_tokens, result.prompt_estimate)
    assert not result.prompt_short


@pytest.mark.parametrize("config_name", ["gpt4o.yaml", "forge-gpt4o.yaml", "boardgame-llm.yaml", "hive-gpt4o.yaml"])
async def test_check_llm_tells_this_servers_capabilities(local_llm: LocalModelServer, config_name: str) -> None:
    from agent.core.config import read_config_mapping
    from agent.games import load_game

    path = ROOT / "configs" / config_name
    game = load_game(read_config_mapping(path).get("game", "tangram"))
    config = local(load_config(path, game.config_model), local_llm)
    assert game.llm_sample is not None
    outcome = await check_llm(config, game.llm_sample(config))
    rows = dict(outcome.rows)
    assert rows["structured output"].startswith(FIRST_FORM[SERVER_KIND]), outcome.message
    assert "counted for about" in rows["prompt tokens"], outcome.message
    if config_name == "gpt4o.yaml":
        assert rows["images"] != "accepted and seen"  # a text-only model: said, not pretended


def test_one_command_starts_the_local_model_and_the_agent(tmp_path: Path) -> None:
    """``python -m agent --local-model`` (what ``make local`` runs): the packaged model is served, the
    agent listens on it, and Ctrl-C stops both (the server is not left running)."""
    import os
    import signal
    import socket
    import subprocess
    import sys
    import time

    from tests.llm_real.conftest import extra_missing

    missing = extra_missing()
    if missing:
        (pytest.fail if os.environ.get("CI") else pytest.skip)(missing)
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    env.pop("OPENAI_API_KEY", None)
    process = subprocess.Popen([sys.executable, "-m", "agent", "--local-model", "--port", "0"], cwd=tmp_path, env=env,
                               stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True, start_new_session=True)
    lines: list[str] = []
    try:
        assert process.stderr is not None
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            line = process.stderr.readline()
            if not line:
                break
            lines.append(line)
            if "listening on ws://" in line:
                break
        assert any("starting the local model (gemma-3-270m" in x for x in lines), lines
        assert any(f"Tangram agent ({MODEL_ALIAS}) listening on ws://" in x for x in lines), lines
        process.send_signal(signal.SIGINT)
        assert process.wait(60) == 0
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(10)
    # The model server went away with the agent: nothing answers on its port any more.
    port = int(next(x for x in lines if "starting the local model" in x).split("127.0.0.1:", 1)[1].split(":")[0])
    with pytest.raises(OSError), socket.create_connection(("127.0.0.1", port), timeout=2):
        pass


async def test_a_prompt_longer_than_the_models_window_goes_in_its_compact_form(local_llm: LocalModelServer) -> None:
    question = "Which piece goes on top? Pick one."
    full = [{"role": "system", "content": "You pick a tangram piece."},
            {"role": "user", "content": "The board is still empty. " * 3000 + question}]
    compact = [full[0], {"role": "user", "content": "The board is still empty. " + question}]
    async with client_for(local_llm) as client:
        first = await client.complete_json(full, SCHEMA, "pick", compact=lambda: compact)
        later = await client.complete_json(full, SCHEMA, "pick", compact=lambda: compact)
        unfit = await client.complete_json(full, SCHEMA, "pick")
    assert first.ok and first.prompt_form == "compact", first.error
    assert first.data is not None and first.data["piece"] in ("Red", "Blue", "Green")
    assert client.context_window is not None and 1024 <= client.context_window <= 8192
    statuses = [a.status for a in first.attempts]
    # llama-cpp-python says its window only by refusing (HTTP 400); llama-server tells it at /props.
    assert statuses[-1] == 200 and (400 in statuses) != bool(client.server_window), statuses
    assert later.ok and [a.status for a in later.attempts] == [200], "fitted before sending"
    assert not unfit.ok and not unfit.attempts and "does not fit the model's context window" in (unfit.error or "")


@pytest.mark.parametrize("config_name", ["gpt4o.yaml", "forge-gpt4o.yaml", "boardgame-llm.yaml", "hive-gpt4o.yaml"])
async def test_our_grammar_holds_the_real_models_answers(local_llm: LocalModelServer, config_name: str) -> None:
    """The grammar sent to llama-server instead of its own (which allows whitespace runs), tried on this
    server, which takes a ``grammar`` as well: every answer is the game's JSON, with no run of whitespace."""
    import json

    import jsonschema
    import openai

    from agent.core.config import read_config_mapping
    from agent.core.llm.bounds import bound_schema
    from agent.core.llm.gbnf import schema_grammar
    from agent.games import load_game

    path = ROOT / "configs" / config_name
    game = load_game(read_config_mapping(path).get("game", "tangram"))
    config = local(load_config(path, game.config_model), local_llm)
    assert game.llm_sample is not None
    sample = game.llm_sample(config)
    schema = bound_schema(sample.schema, config.llm.field_chars, grammar=True, say=lambda n: f"At most {n} characters.")
    grammar = schema_grammar(schema)
    assert grammar is not None
    words = f"Answer with JSON only, in this shape: {json.dumps(sample.schema)}"
    messages = [{"role": "user", "content": f"{words}\n\n{text_of(sample.messages)[-3000:]}"}]
    async with openai.AsyncOpenAI(base_url=local_llm.base_url, api_key="none", timeout=240) as sdk:
        reply = await sdk.chat.completions.create(model=MODEL_ALIAS, messages=messages,  # type: ignore[arg-type]
                                                  max_tokens=config.llm.max_tokens, temperature=0.8, seed=7,
                                                  extra_body={"grammar": grammar})
    text = reply.choices[0].message.content or ""
    assert reply.choices[0].finish_reason == "stop", text[-300:]
    jsonschema.validate(json.loads(text), schema)
    # a raw line break or tab can only be whitespace between tokens (inside a string the grammar wants them escaped)
    assert "\n" not in text and "\t" not in text, text


def text_of(messages: list[dict[str, object]]) -> str:
    """Every message's text, pictures left out (this model reads text only)."""
    from agent.core.llm.dialect import text_of as content_text

    return "\n\n".join(content_text(m.get("content")) for m in messages)
