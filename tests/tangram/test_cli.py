"""The command line: fails fast with one clear line, serves, and stops cleanly on SIGTERM."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from agent.games.tangram.config import PROJECT_DIR


def run_agent(args: list[str], cwd: Path, env_extra: dict[str, str] | None = None, timeout: float = 30):
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
    env.update(env_extra or {})
    return subprocess.run([sys.executable, "-m", "agent", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=timeout)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_unreadable_config_fails_fast(tmp_path):
    res = run_agent(["--config", str(tmp_path / "nope.yaml")], tmp_path)
    assert res.returncode == 2
    want = f"error: cannot read config {tmp_path / 'nope.yaml'}: No such file or directory"
    assert res.stderr.strip().splitlines() == [want]


def test_invalid_config_names_the_field(tmp_path):
    (tmp_path / "c.yaml").write_text("turn:\n  deadline: -3\n")
    res = run_agent(["--config", "c.yaml"], tmp_path)
    assert res.returncode == 2 and "field 'turn.deadline'" in res.stderr
    assert len(res.stderr.strip().splitlines()) == 1


def test_llm_config_without_a_key_fails_fast(tmp_path):
    res = run_agent(["--config", str(PROJECT_DIR / "configs" / "gpt4o.yaml")], tmp_path)
    assert res.returncode == 2 and "needs an API key: set OPENAI_API_KEY" in res.stderr


def test_key_from_dotenv_in_the_working_folder_is_used(tmp_path):
    (tmp_path / ".env").write_text("OPENAI_API_KEY=sk-from-dotenv\n")
    port = free_port()
    with socket.socket() as blocker:  # make the start fail after the key check, on the port
        blocker.bind(("127.0.0.1", port))
        blocker.listen()
        res = run_agent(["--config", str(PROJECT_DIR / "configs" / "gpt4o.yaml"), "--port", str(port)], tmp_path)
    assert "API key" not in res.stderr
    assert res.returncode == 2 and f"port {port} is already in use" in res.stderr


def test_port_in_use_fails_fast(tmp_path):
    port = free_port()
    with socket.socket() as blocker:
        blocker.bind(("127.0.0.1", port))
        blocker.listen()
        res = run_agent(["--port", str(port)], tmp_path)
    assert res.returncode == 2
    assert res.stderr.strip() == f"error: port {port} is already in use on 127.0.0.1 (is another agent running?)"


def test_remote_host_needs_explicit_permission(tmp_path):
    res = run_agent(["--host", "0.0.0.0", "--port", str(free_port())], tmp_path)
    assert res.returncode == 2 and "allow_remote" in res.stderr


def test_bad_template_folder_fails_fast(tmp_path):
    (tmp_path / "tpl").mkdir()
    for name in ("system", "play", "feedback", "chat"):
        (tmp_path / "tpl" / f"{name}.j2").write_text("{{ objective }}")
    (tmp_path / "tpl" / "play.j2").write_text("{{ no_such_variable }}")
    (tmp_path / "c.yaml").write_text("player: llm\nprompts_dir: tpl\nllm:\n  api_key_required: false\n")
    res = run_agent(["--config", "c.yaml"], tmp_path)
    assert res.returncode == 2 and "play.j2" in res.stderr and "no_such_variable" in res.stderr


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_serves_then_stops_cleanly_on_signal(tmp_path, sig):
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
    proc = subprocess.Popen([sys.executable, "-m", "agent", "--port", str(port)], cwd=tmp_path, env=env,
                            stderr=subprocess.PIPE, text=True)
    try:
        lines = [proc.stderr.readline() for _ in range(2)]  # the log line, then the banner
        assert any(f"listening on ws://localhost:{port}" in line for line in lines), lines
        with socket.create_connection(("127.0.0.1", port), timeout=5):
            pass
        proc.send_signal(sig)
        assert proc.wait(timeout=15) == 0
    finally:
        if proc.poll() is None:
            proc.kill()


def test_unknown_default_figure_fails_fast(tmp_path):
    (tmp_path / "c.yaml").write_text("planner:\n  default_figure: spoon\n")
    res = run_agent(["--config", "c.yaml"], tmp_path)
    assert res.returncode == 2 and "field 'planner.default_figure'" in res.stderr and "house" in res.stderr
