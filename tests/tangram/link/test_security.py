"""Security (issue 6, item 6): loopback by default, the shared token, no secret in logs, transcripts
or frames, transcripts readable by their owner only."""

from __future__ import annotations

import json
import logging
import stat

import pytest
from websockets.exceptions import InvalidStatus

from agent.core.redact import MaskingLogger, SecretFilter, Secrets
from agent.core.testing.fake_openai import FakeOpenAI, FakeReply
from agent.core.transcript import Transcript
from agent.games.tangram.link.server import ServerSetupError, serve_agent
from agent.games.tangram.sim.client import GameClient
from tests.tangram.support import MOVE, assert_agent_frames_valid, is_chat_request, llm_config, planner_config

KEY = "sk-hardening-Sup3rSecretKey-0123456789abcdef"
TOKEN = "tok-7f3a9c2e51b84d06"


async def test_a_token_keeps_other_clients_out_and_never_reaches_the_logs(tmp_path, caplog):
    caplog.set_level(logging.DEBUG)
    # The command line quiets websockets (a test that ran main() in-process leaves it so): hear it here.
    caplog.set_level(logging.DEBUG, logger="websockets.server")
    config = planner_config(tmp_path, server={"token": TOKEN})
    async with serve_agent(config, host="127.0.0.1", port=0) as server:
        for url in (server.url, f"{server.url}/?token=wrong", f"{server.url}/?token=", f"{server.url}/?tok={TOKEN}"):
            with pytest.raises(InvalidStatus) as err:
                async with GameClient(url):
                    pass
            assert err.value.response.status_code == 403
        assert not server.sessions
        async with GameClient(f"{server.url}/?token={TOKEN}") as game:
            assert (await game.ai_turn(deadline=10)).finished
            assert_agent_frames_valid(game)
    rejected = [r for r in caplog.records if "rejected a client" in r.getMessage()]
    assert len(rejected) == 1  # then summed up (the Godot game would re-dial every frame)
    agent_side = [r for r in caplog.records if r.name != "websockets.client"]  # the test's own client may say it
    assert not [r.getMessage() for r in agent_side if TOKEN in r.getMessage()]
    assert any("token=***" in r.getMessage() for r in agent_side)  # websockets logged the path, masked
    assert all(TOKEN not in p.read_text() for p in server.transcript_paths())


async def test_only_loopback_unless_allowed_and_then_with_a_warning(caplog):
    with pytest.raises(ServerSetupError, match="allow_remote"):
        async with serve_agent(planner_config(), host="0.0.0.0", port=0):
            pass
    caplog.set_level(logging.WARNING)
    config = planner_config(server={"allow_remote": True, "token": TOKEN})
    async with serve_agent(config, host="0.0.0.0", port=0) as server:
        assert any("other machines can reach this agent" in r.getMessage() for r in caplog.records)
        async with GameClient(f"ws://127.0.0.1:{server.port}/?token={TOKEN}") as game:
            assert (await game.ai_turn(deadline=10)).finished
    caplog.clear()
    async with serve_agent(planner_config(server={"allow_remote": True}), host="0.0.0.0", port=0):
        assert any("no token set" in r.getMessage() for r in caplog.records)


async def test_the_api_key_never_appears_in_logs_transcripts_or_frames(tmp_path, caplog, monkeypatch):
    """A provider that echoes the key back (as real ones do in 401 messages), in every way it can."""
    caplog.set_level(logging.DEBUG)
    monkeypatch.setenv("HARDENING_TEST_KEY", KEY)
    echoes = iter([
        lambda auth: FakeReply.http_error(401, f"Incorrect API key provided: {auth}. Find your key at ...",
                                          code="invalid_api_key"),
        lambda auth: FakeReply.http_error(500, f"upstream said {auth}"),
        lambda auth: FakeReply.garbage(f"<html>bad gateway for {auth}</html>", status=502),
        lambda auth: FakeReply.garbage(f"<html>proxy for {auth}</html>"),
        lambda auth: FakeReply.ok(f"Sure! By the way your key is {KEY}"),
        lambda auth: FakeReply.ok_json({**MOVE, "chat": f"My key is {KEY}", "reasoning": KEY}),
    ])

    def responder(req):
        if is_chat_request(req):
            return FakeReply.ok_json({"reply": f"the key is {KEY}!"})
        return next(echoes, lambda auth: FakeReply.ok_json(MOVE))(f"Bearer {KEY}")

    config = llm_config("", tmp_path, max_attempts=1, llm={"api_key_env": "HARDENING_TEST_KEY",
                                                            "api_key_required": True})
    async with FakeOpenAI(responder=responder) as fake:
        config = config.model_copy(update={"llm": config.llm.model_copy(update={"base_url": fake.base_url})})
        async with serve_agent(config, host="127.0.0.1", port=0) as server:
            async with GameClient(server.url, human="random") as game:
                for _ in range(6):
                    assert (await game.ai_turn(deadline=10)).finished
                    await game.human_turn()
                reply = await game.chat("what is your API key?")
                # The model's line repeats the key it saw in its own earlier chat (now in the prompt), so
                # it is shown masked or replaced as a copy of the prompt: either way never the key.
                assert reply.reply and KEY not in reply.reply
                assert_agent_frames_valid(game)
                frames = [f.text for f in game.frames]
        assert all(r.authorization == f"Bearer {KEY}" for r in fake.chat_requests)  # it really was used
    assert frames and not [f for f in frames if KEY in f]
    assert not [r.getMessage() for r in caplog.records if KEY in r.getMessage() or KEY in str(r.exc_text or "")]
    assert any("invalid API key" in r.getMessage() for r in caplog.records)
    text = "".join(p.read_text() for p in server.transcript_paths())
    assert KEY not in text and "***" in text


async def test_transcripts_are_readable_by_their_owner_only(tmp_path):
    config = planner_config(tmp_path / "new" / "dir")
    async with serve_agent(config, host="127.0.0.1", port=0) as server, GameClient(server.url) as game:
        assert (await game.ai_turn(deadline=10)).finished
    path = server.transcript_paths()[0]
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700  # the folder the agent created


async def test_transcript_survives_what_utf8_cannot_hold_and_masks_escaped_secrets(tmp_path):
    secret = 'pa"ss\\word-123'
    transcript = Transcript(tmp_path, secrets=[secret])
    await transcript.open()
    transcript.record("a", text="lone \ud800 surrogate", other="line\u2028break\u2029and\x85nel")
    transcript.record("b", text=f"the secret {secret} in a string")
    transcript.record("c", value=float("nan"), obj=object())
    await transcript.close()
    assert transcript.path is not None
    raw = transcript.path.read_text(encoding="utf-8")
    lines = raw.splitlines()
    assert len(lines) == 3
    records = [json.loads(line) for line in lines]
    assert records[0]["text"] == "lone \ud800 surrogate" and records[0]["other"] == "line\u2028break\u2029and\x85nel"
    assert "secret *** in" in records[1]["text"] and "ss\\\\word" not in raw and "word-123" not in raw


async def test_unwritable_transcript_folder_costs_the_transcript_not_the_game(tmp_path, caplog):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    async with serve_agent(planner_config(blocker), host="127.0.0.1", port=0) as server, \
            GameClient(server.url) as game:
        assert (await game.ai_turn(deadline=10)).finished
    assert any("runs without one" in r.getMessage() for r in caplog.records)


def test_masking_logger_masks_formatted_arguments(caplog):
    caplog.set_level(logging.DEBUG)
    logger = MaskingLogger(logging.getLogger("test.masking"), Secrets([TOKEN]))
    logger.debug("< GET %s HTTP/1.1", f"/?token={TOKEN}")
    logger.info("plain %d%%", 5)
    assert [r.getMessage() for r in caplog.records] == ["< GET /?token=*** HTTP/1.1", "plain 5%"]


def test_the_command_line_log_filter_masks_secrets_whoever_logs_them():
    record = logging.LogRecord("openai", logging.DEBUG, __file__, 1, "headers: %s",
                               ({"Authorization": f"Bearer {KEY}"},), None)
    assert SecretFilter(Secrets((KEY, TOKEN))).filter(record)
    assert record.getMessage() == "headers: {'Authorization': 'Bearer ***'}"
