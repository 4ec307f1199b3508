"""python -m agent --browser-game: one line for each bad input, and a served game next to the agent."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request

import pytest

from agent.cli import main
from tests.tangram.webgame.support import write_project, write_template


@pytest.fixture(autouse=True)
def _quiet_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)


def run(args, capsys) -> tuple[int, list[str]]:
    code = main(args)
    return code, [line for line in capsys.readouterr().err.splitlines() if line.startswith("error:")]


def test_a_folder_that_is_no_gaips_clone(tmp_path, capsys):
    (tmp_path / "empty").mkdir()
    code, errors = run(["--browser-game", str(tmp_path / "empty")], capsys)
    assert code == 2 and errors == [f"error: {tmp_path / 'empty'} is not a GAIPS Tangram clone ({tmp_path / 'empty'} "
                                    "holds no project.godot and is no git repository); clone "
                                    "https://github.com/GAIPS/TangramCollaborativeAI"]


def test_sources_without_a_web_build_need_a_template(tmp_path, capsys):
    project = write_project(tmp_path / "p")
    code, errors = run(["--browser-game", str(project)], capsys)
    assert code == 2 and errors == [f"error: {project} has no complete web build in exe/ (index.html, index.js, "
                                    "index.wasm, index.pck missing): give a Godot 4 web export template with "
                                    "--godot-web (see docs/browser-game.md)"]


def test_a_template_of_another_engine_version(tmp_path, capsys):
    template = write_template(tmp_path / "t", "3.6.stable.official")
    code, errors = run(["--browser-game", str(write_project(tmp_path / "p")), "--godot-web", str(template)], capsys)
    assert code == 2 and errors == [f"error: web template {template} is Godot 3.6.stable; the game needs a Godot 4 "
                                    "web template (e.g. 4.6)"]


def test_a_template_with_files_missing(tmp_path, capsys):
    template = write_template(tmp_path / "t")
    (template / "index.wasm").unlink()
    code, errors = run(["--browser-game", str(write_project(tmp_path / "p")), "--godot-web", str(template)], capsys)
    assert code == 2 and errors == [f"error: web template {template} is incomplete: index.wasm missing"]


def test_template_flag_without_a_game(tmp_path, capsys):
    code, errors = run(["--godot-web", str(tmp_path)], capsys)
    assert code == 2 and errors == ["error: --godot-web needs --browser-game DIR"]


def test_a_port_in_use(tmp_path, capsys):
    args = ["--browser-game", str(write_project(tmp_path / "p")), "--godot-web", str(write_template(tmp_path / "t"))]
    with socket.socket() as blocker:
        blocker.bind(("127.0.0.1", 0))
        blocker.listen()
        port = blocker.getsockname()[1]
        code, errors = run([*args, "--browser-port", str(port), "--port", "0", "--no-browser"], capsys)
    assert code == 2 and errors == [f"error: port {port} is already in use on 127.0.0.1: pick another with "
                                    "--browser-port PORT"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_serves_the_game_next_to_the_agent_and_stops_on_sigterm(tmp_path):
    project, template = write_project(tmp_path / "p"), write_template(tmp_path / "t")
    port, agent_port = free_port(), free_port()
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")},
           "XDG_CACHE_HOME": str(tmp_path / "cache")}
    proc = subprocess.Popen([sys.executable, "-m", "agent", "--browser-game", str(project), "--godot-web",
                             str(template), "--browser-port", str(port), "--port", str(agent_port), "--no-browser"],
                            cwd=tmp_path, env=env, stderr=subprocess.PIPE, text=True)
    lines = []
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            line = proc.stderr.readline() if proc.stderr else ""
            if not line:
                break
            lines.append(line.rstrip())
            if line.startswith("Real game"):
                break
        url = f"http://localhost:{port}/"
        assert f"Real game (built from the sources, Godot 4.6.stable): {url} - open it in a browser with WebGL 2; " \
               "it dials ws://localhost:5000." in lines
        assert any(line.startswith("warning: res://icon.svg") for line in lines)
        assert f"warning: the game dials ws://localhost:5000, but this agent listens on port {agent_port}: the game " \
               "will not find it" in lines
        with urllib.request.urlopen(f"{url}index.wasm", timeout=10) as response:
            assert response.headers["Content-Type"] == "application/wasm"
            assert response.headers["Cross-Origin-Embedder-Policy"] == "require-corp"
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_a_browser_is_opened_only_where_a_graphical_one_is(monkeypatch):
    import webbrowser

    from agent.games.tangram.webgame import launch

    opened = []

    class Controller:
        def __init__(self, name):
            self.name = name

        def open(self, url, new=0):
            opened.append((self.name, url))
            return True

    monkeypatch.setattr(launch.sys, "platform", "linux")
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    monkeypatch.setattr(webbrowser, "get", lambda: Controller("firefox"))
    assert launch.open_browser("http://localhost:8060/") is False  # no display: nothing to open
    monkeypatch.setenv("DISPLAY", ":0")
    monkeypatch.setattr(webbrowser, "get", lambda: Controller("lynx"))
    assert launch.open_browser("http://localhost:8060/") is False  # would take over the agent's terminal
    monkeypatch.setattr(webbrowser, "get", lambda: Controller("firefox"))
    assert launch.open_browser("http://localhost:8060/") is True
    assert opened == [("firefox", "http://localhost:8060/")]

    def no_browser():
        raise webbrowser.Error("could not locate runnable browser")

    monkeypatch.setattr(webbrowser, "get", no_browser)
    assert launch.open_browser("http://localhost:8060/") is False
