"""``python -m agent`` as its own process on port 5000 (the port the game dials), for any config:
the offline planner, a fake OpenAI-compatible server, or the local real model (``--local-model``).
Its log goes to ``agent.log`` and its transcripts into the run's folder."""

from __future__ import annotations

import asyncio
import contextlib
import errno
import socket
import sys
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

GAME_PORT = 5000
"""Fixed in the game (ws://localhost:5000)."""
START_S = 60.0
LOCAL_MODEL_START_S = 600.0
"""The local model assembles and loads its weights first (a first start takes minutes on a busy CPU)."""
STOP_S = 25.0
MAX_LOG_LINES = 20_000

AGENT_LEFT = "left (session"
"""The agent's log line when a game's socket closes."""


class RunnerError(Exception):
    """A step of the run that cannot go on; the message says which and why, in one line."""


def port_in_use(port: int) -> str | None:
    """Why ``port`` cannot be listened on at loopback (the address and the OS's reason), else None."""
    for family, host in ((socket.AF_INET, "127.0.0.1"), (socket.AF_INET6, "::1")):
        try:
            with socket.socket(family, socket.SOCK_STREAM) as s:
                s.bind((host, port))
        except OSError as exc:
            if exc.errno == errno.EADDRNOTAVAIL or (family == socket.AF_INET6 and exc.errno == errno.EAFNOSUPPORT):
                continue  # no IPv6 loopback on this machine: nothing can hold it either
            return f"{host}:{port} ({exc.strerror or exc})"
    return None


def agent_config(base: dict[str, Any], transcripts: Path, llm_base_url: str | None = None,
                 port: int = GAME_PORT) -> dict[str, Any]:
    """``base`` (a config file's mapping) with transcripts into the run's folder, the game's port,
    and, for the fake LLM, its address."""
    config = dict(base)
    config["transcripts"] = {**(config.get("transcripts") or {}), "dir": str(transcripts), "enabled": True}
    config["server"] = {**(config.get("server") or {}), "port": port}
    if llm_base_url is not None:
        llm = dict(config.get("llm") or {})
        llm.update({"base_url": llm_base_url, "api_key_required": False})
        config["llm"] = llm
    return config


@dataclass
class AgentProcess:
    process: asyncio.subprocess.Process
    log_path: Path
    lines: list[str] = field(default_factory=list)
    changed: asyncio.Event = field(default_factory=asyncio.Event)

    async def wait_line(self, match: Callable[[str], bool], since: int, timeout: float) -> str | None:
        """The first log line from index ``since`` on that ``match``es, within ``timeout`` s, else None."""
        loop = asyncio.get_running_loop()
        end = loop.time() + timeout
        cursor = since
        while True:
            self.changed.clear()
            while cursor < len(self.lines):
                cursor += 1
                if match(self.lines[cursor - 1]):
                    return self.lines[cursor - 1]
            left = end - loop.time()
            if left <= 0 or self.process.returncode is not None:
                return None
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.changed.wait(), left)


@contextlib.asynccontextmanager
async def run_agent(config: dict[str, Any] | None, out: Path, local_model: bool, study: Path | None = None,
                    port: int = GAME_PORT, console_port: int | None = None) -> AsyncIterator[AgentProcess]:
    """The agent listening on ws://localhost:5000 with ``config`` until the block ends; with
    ``study``, serving that study file instead (from ``out``, where its transcripts go), with the
    experimenter console on ``console_port``."""
    cmd = [sys.executable, "-m", "agent", "--log-level", "INFO"]
    if study is not None:
        cmd += ["--study", str(study), "--port", str(port)]
    else:
        path = out / "agent.yaml"
        path.write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
        cmd += ["--config", str(path)]
    if console_port is not None:
        cmd += ["--console", f"127.0.0.1:{console_port}"]
    if local_model:
        cmd.append("--local-model")
    log_path = out / "agent.log"
    proc = await asyncio.create_subprocess_exec(*cmd, stdout=asyncio.subprocess.DEVNULL,
                                                cwd=out if study is not None else None,
                                                stderr=asyncio.subprocess.PIPE)
    agent = AgentProcess(proc, log_path)

    async def drain() -> None:
        assert proc.stderr is not None
        with log_path.open("w", encoding="utf-8") as log:
            async for raw in proc.stderr:
                line = raw.decode(errors="replace").rstrip()
                log.write(line + "\n")
                log.flush()
                if len(agent.lines) < MAX_LOG_LINES:
                    agent.lines.append(line)
                agent.changed.set()
        agent.changed.set()

    reader = asyncio.create_task(drain())
    try:
        started = await agent.wait_line(lambda line: "listening on ws://" in line, 0,
                                        LOCAL_MODEL_START_S if local_model else START_S)
        if started is None:
            tail = " | ".join(agent.lines[-3:]) or "no output"
            raise RunnerError(f"the agent did not start listening (see {log_path}): {tail}")
        yield agent
    finally:
        if proc.returncode is None:
            proc.terminate()
        try:
            await asyncio.wait_for(proc.wait(), STOP_S)
        except TimeoutError:
            proc.kill()
            await proc.wait()
        await reader
