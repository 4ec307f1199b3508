"""The model server the agent starts is watched: a death is named at once (signal, log, cause, fix),
the server is started once more, and a second death leaves the offline player playing with one line.

The stand-in model server is the fake OpenAI server as its own process, told to kill itself with
SIGSEGV on a given chat POST (``--die-after``), as llama.cpp's AMX backend does on a first completion.
"""

from __future__ import annotations

import asyncio
import logging
import signal
import sys
from pathlib import Path

import pytest

from agent.core.config import LLMConfig, RetryConfig
from agent.core.llm import LLMClient
from agent.core.local_model import LocalModelServer, diagnose, exit_words, free_port, read_status

MESSAGES = [{"role": "system", "content": "You play."}, {"role": "user", "content": "Your turn."}]
READY_S = 30.0


def stand_in(port: int, die_after: int) -> list[str]:
    return [sys.executable, "-m", "agent.core.testing.fake_openai", "--port", str(port),
            "--die-after", str(die_after)]


def client_for(server: LocalModelServer) -> LLMClient:
    config = LLMConfig(base_url=server.base_url, model="fake-model", api_key_required=False, probe_dialect=False,
                       prime=False, server_status=server.status_path,
                       retry=RetryConfig(max_attempts=2, initial_backoff=0.05, max_backoff=0.1))
    return LLMClient(config, None)


async def wait_for(predicate, seconds: float = READY_S) -> None:  # type: ignore[no-untyped-def]
    async with asyncio.timeout(seconds):
        while not predicate():
            await asyncio.sleep(0.05)


def test_exit_words_name_the_signal() -> None:
    assert exit_words(-signal.SIGSEGV) == "signal SIGSEGV (11)"
    assert exit_words(1) == "exit status 1"


def test_a_crash_on_an_amx_cpu_names_the_amx_backend_and_the_portable_rebuild() -> None:
    amx = diagnose(-signal.SIGSEGV, "", amx=True)
    assert "AMX" in amx and "python -m agent.core.local_build install --force" in amx
    plain = diagnose(-signal.SIGSEGV, "", amx=False)
    assert "AMX" not in plain and "local_build install --force" in plain
    assert "out-of-memory" in diagnose(-signal.SIGKILL, "", amx=False)
    assert "instruction" in diagnose(-signal.SIGILL, "", amx=False)
    assert "port" in diagnose(1, "error: [Errno 98] address already in use", amx=False)


async def test_a_server_dying_on_every_first_post_is_restarted_once_then_the_fallback_plays(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING)
    server = LocalModelServer(port=free_port(), command=None, log_path=tmp_path / "server.log")
    server.command = stand_in(server.port, die_after=1)
    await asyncio.to_thread(server.start, READY_S)
    client = client_for(server)
    try:
        first = await client.complete_text(MESSAGES)
        assert not first.ok
        assert client.outage.state == "down"
        status = read_status(server.status_path)  # type: ignore[arg-type]
        assert status is not None and status.deaths == 1
        report = status.report
        assert "signal SIGSEGV (11)" in report and str(server.log_path) in report
        assert "local_build install --force" in report
        # while it is down nothing is sent and nothing more is logged per call
        lines_before = len(caplog.records)
        skipped = await client.complete_text(MESSAGES)
        assert skipped.skipped and "stopped answering" in (skipped.error or "")
        assert len(caplog.records) == lines_before
        # the watcher restarts it; the probe sees it answer and the model is asked again
        await wait_for(lambda: client.outage.state == "up")
        second = await client.complete_text(MESSAGES)  # it dies again: no more restarts
        assert not second.ok
        await wait_for(lambda: client.outage.state == "gone")
        assert server.status.state == "dead" and server.status.deaths == 2
        quiet = len(caplog.records)
        for _ in range(3):
            later = await client.complete_text(MESSAGES)
            assert later.skipped and "died again" in (later.error or "")
        assert len(caplog.records) == quiet
        said = "\n".join(r.getMessage() for r in caplog.records)
        assert said.count("plays for the rest of this run") >= 1
        # one line for the first outage; the second is "stopped answering" or, when the watcher has already
        # written "dead", straight "died again": never a line per call
        assert 1 <= said.count("stopped answering") <= 2
    finally:
        await client.aclose()
        await asyncio.to_thread(server.stop)


async def test_a_server_that_dies_later_is_reported_when_it_dies(tmp_path: Path) -> None:
    server = LocalModelServer(port=free_port(), log_path=tmp_path / "server.log", restarts=0)
    server.command = stand_in(server.port, die_after=3)
    await asyncio.to_thread(server.start, READY_S)
    client = client_for(server)
    try:
        assert (await client.complete_text(MESSAGES)).ok
        assert (await client.complete_text(MESSAGES)).ok
        assert server.died() is None
        assert not (await client.complete_text(MESSAGES)).ok
        await wait_for(lambda: client.outage.state == "gone")
        report = server.died()
        assert report is not None and "signal SIGSEGV" in report
    finally:
        await client.aclose()
        await asyncio.to_thread(server.stop)


def test_check_llm_names_the_crash_and_its_fix(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    from agent.cli import _check_llm, prepare

    game, config, _ = prepare(["--local-model"])
    server = LocalModelServer(port=int(str(config.llm.base_url).rsplit(":", 1)[1].split("/")[0]),
                              log_path=tmp_path / "server.log", status_path=config.llm.server_status, restarts=0)
    server.command = stand_in(server.port, die_after=1)
    server.start(READY_S)
    try:
        assert _check_llm(game, config, server) == 2
    finally:
        server.stop()
    err = capsys.readouterr().err
    assert "error: LLM check failed" in err
    assert "signal SIGSEGV (11)" in err and "local_build install --force" in err and str(server.log_path) in err


def test_a_server_stopped_by_the_agent_is_not_reported_as_dead(tmp_path: Path) -> None:
    server = LocalModelServer(port=free_port(), log_path=tmp_path / "server.log")
    server.command = stand_in(server.port, die_after=100)
    server.start(READY_S)
    server.stop()
    assert server.status.state == "up" and server.status.deaths == 0


def test_a_native_amx_build_is_refused_before_it_starts_with_the_rebuild_command() -> None:
    from agent.core.local_model import amx_build_problem

    info = "CPU : SSE3 = 1 | AVX = 1 | AVX2 = 1 | AVX512 = 1 | AMX_INT8 = 1 | LLAMAFILE = 1 |"
    problem = amx_build_problem(info, amx_cpu=True)
    assert problem is not None and "local_build install --force" in problem
    assert amx_build_problem(info, amx_cpu=False) is None
    assert amx_build_problem(info.replace("AMX_INT8 = 1 | ", ""), amx_cpu=True) is None
