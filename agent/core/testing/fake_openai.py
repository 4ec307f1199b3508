"""A scriptable fake of an OpenAI-compatible Chat Completions server, for tests and benchmarks.

It speaks just enough of the API for the real ``openai`` SDK: ``POST /v1/chat/completions`` and
``GET /v1/models``. Each request takes the next scripted :class:`FakeReply` from a queue, else asks
an optional ``responder(request_json)``, else answers with a fixed default content. Replies can be
completions, HTTP errors with headers, stalls, dropped connections or broken bodies, so the
client's retry and fallback paths run against real HTTP instead of mocks.

In random-schema mode (``random_schema=RandomSchemaOptions()``, or ``--random-schema``) a request
that names a JSON Schema in ``response_format`` and finds no scripted reply is answered with a
random instance of that schema (:mod:`agent.core.testing.random_schema`): a sloppy model that keeps
to the schema and to nothing else.

Three ways to run it:

* ``async with FakeOpenAI() as fake:`` inside the test's event loop;
* ``with FakeOpenAI() as fake:`` (or ``FakeOpenAI.run_in_thread()``) on a background thread, for
  sync code or for agents started as subprocesses;
* ``python -m agent.core.testing.fake_openai --port 0 --delay 1 --reply '{"ok": true}'`` as its own
  process; it prints its base URL on the first line of stdout, serves ``GET /_fake/stats``
  (request count, largest number in flight) and ``GET /_fake/timings`` (each request's answer
  time, for benchmarks), and prints the stats as JSON when stopped.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import inspect
import json
import os
import random
import signal
import sys
import threading
import time
from collections import deque
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from aiohttp import web

from agent.core.llm.probe import PROBE_HEADER
from agent.core.testing.fake_stream import DONE, pieces, sse, stream_events, wants_stream, wants_usage
from agent.core.testing.random_schema import RandomSchemaOptions, random_instance, request_schema

DEFAULT_CONTENT = '{"ok": true}'
DEFAULT_MODEL = "fake-model"
TEMPLATE_TOKENS = 3
WINDOW_TOKENS_PER_IMAGE = 256
"""Tokens a chat template adds to any prompt (a server counts them even when it drops every message)."""
MAX_TIMINGS = 100_000
"""Per-request answer times kept (the oldest are dropped first)."""

Responder = Callable[[dict[str, Any]], "FakeReply | Awaitable[FakeReply | None] | None"]


@dataclass
class FakeReply:
    """One scripted answer. The default instance is a 200 completion with the server's default content."""

    content: str | None = None
    """Assistant message text; None means the server's default content."""
    status: int = 200
    error_message: str = ""
    error_type: str = "invalid_request_error"
    error_code: str | None = None
    error_param: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    """Seconds the server waits before answering (a slow or stalled model)."""
    drop: bool = False
    """Close the connection without answering."""
    raw_body: str | None = None
    """Send this body verbatim instead of a well-formed completion (garbage)."""
    truncate: bool = False
    """Announce the full body length, send half of it, then close the connection."""
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    finish_reason: str = "stop"
    model: str | None = None
    piece_delay: float = 0.0
    """Seconds each piece of the answer (four characters, about a token) takes to generate: streamed
    (``stream: true``), before each piece after the first (``delay`` before the first: the prompt read);
    not streamed, all of them before the answer, after ``delay``."""

    @classmethod
    def ok(cls, content: str, **kw: Any) -> FakeReply:
        return cls(content=content, **kw)

    @classmethod
    def ok_json(cls, data: Any, **kw: Any) -> FakeReply:
        return cls(content=json.dumps(data), **kw)

    @classmethod
    def http_error(cls, status: int, message: str = "", *, headers: dict[str, str] | None = None,
                   error_type: str | None = None, code: str | None = None, param: str | None = None,
                   delay: float = 0.0) -> FakeReply:
        default_type = "server_error" if status >= 500 else "invalid_request_error"
        return cls(status=status, error_message=message or f"fake error {status}",
                   error_type=error_type or default_type, error_code=code, error_param=param,
                   headers=dict(headers or {}), delay=delay)

    @classmethod
    def rate_limited(cls, retry_after: float | None = None, *, retry_after_ms: float | None = None,
                     message: str = "Rate limit reached, please retry later") -> FakeReply:
        headers: dict[str, str] = {}
        if retry_after is not None:
            headers["Retry-After"] = f"{retry_after:g}"
        if retry_after_ms is not None:
            headers["retry-after-ms"] = f"{retry_after_ms:g}"
        return cls.http_error(429, message, headers=headers, error_type="rate_limit_error",
                              code="rate_limit_exceeded")

    @classmethod
    def stall(cls, seconds: float, content: str | None = None) -> FakeReply:
        return cls(content=content, delay=seconds)

    @classmethod
    def dropped(cls, delay: float = 0.0) -> FakeReply:
        return cls(drop=True, delay=delay)

    @classmethod
    def garbage(cls, body: str = "<html>502 Bad Gateway</html>", status: int = 200) -> FakeReply:
        return cls(raw_body=body, status=status)

    @classmethod
    def truncated(cls, content: str | None = None) -> FakeReply:
        return cls(content=content, truncate=True)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> FakeReply:
        """Build from a JSON object with the field names above (the CLI's --replies file)."""
        known = {f.name for f in fields(cls)}
        unknown = set(data) - known
        if unknown:
            raise ValueError(f"unknown FakeReply fields: {sorted(unknown)}")
        return cls(**data)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class RecordedRequest:
    """What the server received, for assertions."""

    method: str
    path: str
    headers: dict[str, str]
    """Header names lower-cased."""
    json: Any
    """Parsed body, or None when the body was empty or not JSON."""
    body: bytes
    received_at: float
    """time.monotonic() on arrival."""
    streamed_events: int = 0
    """Streamed answers: the events written to the client."""
    disconnected: bool = False
    """Streamed answers: the client closed the stream before its end, and the "model" stopped there."""
    ended_at: float | None = None
    """Streamed answers: time.monotonic() when the server stopped working on it (answered or stopped)."""

    @property
    def messages(self) -> list[dict[str, Any]]:
        if isinstance(self.json, dict) and isinstance(self.json.get("messages"), list):
            return self.json["messages"]
        return []

    @property
    def response_format_type(self) -> str | None:
        rf = self.json.get("response_format") if isinstance(self.json, dict) else None
        return rf.get("type") if isinstance(rf, dict) else None

    @property
    def authorization(self) -> str | None:
        return self.headers.get("authorization")

    def image_urls(self) -> list[str]:
        """Every image_url part's URL, in message order."""
        urls: list[str] = []
        for message in self.messages:
            content = message.get("content")
            if isinstance(content, list):
                urls.extend(part.get("image_url", {}).get("url", "") for part in content
                            if isinstance(part, dict) and part.get("type") == "image_url")
        return urls


def first_enum_value(schema: Any) -> Any:
    """The answer a model gives that always takes the first option: the first value of every enum,
    the first non-null branch of every ``anyOf``, the smallest allowed number, a short string.
    Fields come in schema order. Tells whether a prompt offers a move that works as it stands."""
    if not isinstance(schema, dict):
        return None
    if schema.get("enum"):
        return schema["enum"][0]
    if "const" in schema:
        return schema["const"]
    if "anyOf" in schema:
        branches = [b for b in schema["anyOf"] if not (isinstance(b, dict) and b.get("type") == "null")]
        return first_enum_value(branches[0]) if branches else None
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), None)
    if kind == "object":
        return {name: first_enum_value(sub) for name, sub in (schema.get("properties") or {}).items()}
    if kind == "array":
        return [first_enum_value(schema.get("items")) for _ in range(int(schema.get("minItems", 0)))]
    if kind in ("number", "integer"):
        low = schema.get("minimum", 0)
        return int(low) if kind == "integer" else float(low)
    if kind == "boolean":
        return False
    if kind == "string":
        return "first option"
    return None


def first_enum_responder(body: dict[str, Any]) -> FakeReply | None:
    """A responder answering every structured request with :func:`first_enum_value` of its schema;
    requests without a JSON schema get the server's default reply."""
    rf = body.get("response_format") if isinstance(body, dict) else None
    schema = rf.get("json_schema", {}).get("schema") if isinstance(rf, dict) else None
    if not isinstance(schema, dict):
        return None
    return FakeReply.ok_json(first_enum_value(schema))


RESPONDERS: dict[str, Responder] = {"first-enum": first_enum_responder}
"""Named answering modes for the command line (``--mode``)."""


class FakeOpenAI:
    """The fake server. Start with ``async with`` (same loop) or ``with`` (background thread)."""

    def __init__(
        self,
        *,
        default_content: str = DEFAULT_CONTENT,
        default_delay: float = 0.0,
        replies: Iterable[FakeReply] = (),
        responder: Responder | None = None,
        api_key: str | None = None,
        reject_response_formats: Iterable[str] = (),
        model: str = DEFAULT_MODEL,
        host: str = "127.0.0.1",
        port: int = 0,
        random_schema: RandomSchemaOptions | None = None,
        seed: int | str | None = None,
        drops_system: bool = False,
        drops_parts: bool = False,
        refuses_images: bool = False,
        context_window: int | None = None,
        tells_window: bool = False,
        llama_props: bool = False,
        refuses_grammar: bool = False,
        llama_cpp_python: bool = False,
        prime_delay: float = 0.0,
        probe_delay: float = 0.0,
    ) -> None:
        self.default_content = default_content
        self.context_window = context_window
        """When set, a prompt whose tokens (as counted here) and max_tokens exceed it is refused with
        HTTP 400 in llama-cpp-python's words ("This model's maximum context length is ...")."""
        self.tells_window = tells_window
        """The model list names the window as vLLM does (``max_model_len``)."""
        self.llama_props = llama_props
        """Answer ``GET /props`` as llama.cpp's llama-server does (its window, its generation settings)."""
        self.llama_cpp_python = llama_cpp_python
        """Behave as llama-cpp-python's server does where a client can tell: its model list (owned by
        "me"), one request at a time, and a request begun answered whole even after its client gave up
        (the next request waits for it)."""
        self._one_at_a_time = asyncio.Lock()
        self.prime_delay = prime_delay
        """Seconds a priming request takes (a cold server's first read of a long prompt)."""
        self.probe_delay = probe_delay
        """Seconds a dialect probe takes (a server that answers every request in the same time)."""
        self.refuses_grammar = refuses_grammar
        """Answer a request carrying a GBNF ``grammar`` with a 400, as a server that cannot parse it would."""
        self.default_delay = default_delay
        self.responder = responder
        self.api_key = api_key
        """When set, requests must carry ``Authorization: Bearer <api_key>`` or get a 401."""
        self.reject_response_formats = set(reject_response_formats)
        """response_format types answered with a 400, like servers without structured output."""
        self.drops_system = drops_system
        """Count no system message, as a chat template without a system role does (llama-cpp-python's gemma)."""
        self.drops_parts = drops_parts
        """Count no message whose content is a list of parts, as a server for a text-only model may."""
        self.refuses_images = refuses_images
        """Answer image parts with a 500, as some llama.cpp-based servers do for a text-only model."""
        self.model = model
        self.host = host
        self.port = port
        self.random_schema = random_schema
        """When set, requests naming a JSON Schema get a random instance of it (after the queue and responder)."""
        self.rng = random.Random(seed)
        # A deque because tests in another thread may enqueue while the server pops.
        self.queue: deque[FakeReply] = deque(replies)
        self.requests: list[RecordedRequest] = []
        self.die_after: int | None = None
        """Command-line only (it ends the process): the POST to chat/completions, counted from 1 with
        probes, on which the server kills itself with ``die_signal`` instead of answering."""
        self.die_signal = signal.SIGSEGV
        self.posts = 0
        self.probe_requests: list[RecordedRequest] = []
        """The client's dialect probes (header X-Agent-Probe), answered here apart from the script."""
        self.in_flight = 0
        self.max_in_flight = 0
        self.answer_seconds: deque[float] = deque(maxlen=MAX_TIMINGS)
        """Seconds each chat request took here, from its arrival to its answer, in arrival order
        of completion (``GET /_fake/timings``): what a benchmark subtracts as the model's time."""
        self._runner: web.AppRunner | None = None
        self._thread: threading.Thread | None = None
        self._thread_loop: asyncio.AbstractEventLoop | None = None
        self._completions = 0

    # ---- scripting and inspection -------------------------------------------------------------

    def enqueue(self, *replies: FakeReply) -> None:
        self.queue.extend(replies)

    def reset(self) -> None:
        """Forget requests, counters and queued replies (call while no request is in flight)."""
        self.queue.clear()
        self.requests.clear()
        self.probe_requests.clear()
        self.answer_seconds.clear()
        self.max_in_flight = self.in_flight

    @property
    def chat_requests(self) -> list[RecordedRequest]:
        return [r for r in self.requests if r.path.endswith("/chat/completions")]

    @property
    def base_url(self) -> str:
        """What to give the SDK as base_url, e.g. ``http://127.0.0.1:41234/v1``."""
        if not self.port:
            raise RuntimeError("FakeOpenAI is not started")
        return f"http://{self.host}:{self.port}/v1"

    def stats(self) -> dict[str, int]:
        return {"requests": len(self.requests), "chat_requests": len(self.chat_requests),
                "in_flight": self.in_flight, "max_in_flight": self.max_in_flight}

    async def wait_for_requests(self, count: int, timeout: float = 5.0) -> None:
        """Wait until ``count`` chat requests have arrived (works in both loop and thread mode)."""
        deadline = time.monotonic() + timeout
        while len(self.chat_requests) < count:
            if time.monotonic() > deadline:
                raise TimeoutError(f"fake server got {len(self.chat_requests)} requests, expected {count}")
            await asyncio.sleep(0.005)

    # ---- lifecycle ------------------------------------------------------------------------------

    async def start(self) -> FakeOpenAI:
        app = web.Application()
        for prefix in ("/v1", ""):
            app.router.add_post(f"{prefix}/chat/completions", self._chat)
            app.router.add_get(f"{prefix}/models", self._models)
        app.router.add_get("/props", self._props)
        app.router.add_get("/_fake/stats", self._stats)
        app.router.add_get("/_fake/timings", self._timings)
        app.router.add_post("/_fake/reset", self._reset)
        app.router.add_post("/_fake/replies", self._enqueue)
        # handler_cancellation: a client that gives up (timeout, cancel) ends its handler, so the
        # in-flight count is the client's view and shutdown never waits for a long scripted delay.
        self._runner = web.AppRunner(app, handler_cancellation=True, access_log=None, shutdown_timeout=0.5)
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.host, self.port)
        await site.start()
        server = getattr(site, "_server", None)
        sockets = getattr(server, "sockets", None) or []
        if sockets:
            self.port = sockets[0].getsockname()[1]
        return self

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def __aenter__(self) -> FakeOpenAI:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    def start_in_thread(self, timeout: float = 10.0) -> FakeOpenAI:
        """Serve from a daemon thread with its own event loop; returns once listening."""
        ready = threading.Event()
        failure: list[BaseException] = []

        def run() -> None:
            loop = asyncio.new_event_loop()
            self._thread_loop = loop
            try:
                loop.run_until_complete(self.start())
            except BaseException as exc:  # reported to the starting thread below
                failure.append(exc)
                ready.set()
                loop.close()
                return
            ready.set()
            try:
                loop.run_forever()
            finally:
                loop.run_until_complete(self.stop())
                loop.close()

        self._thread = threading.Thread(target=run, name="fake-openai", daemon=True)
        self._thread.start()
        if not ready.wait(timeout):
            raise TimeoutError("fake OpenAI server did not start")
        if failure:
            raise failure[0]
        return self

    def stop_in_thread(self) -> None:
        if self._thread is None or self._thread_loop is None:
            return
        self._thread_loop.call_soon_threadsafe(self._thread_loop.stop)
        self._thread.join(timeout=10)
        self._thread = None
        self._thread_loop = None

    @classmethod
    def run_in_thread(cls, **kwargs: Any) -> FakeOpenAI:
        return cls(**kwargs).start_in_thread()

    def __enter__(self) -> FakeOpenAI:
        return self.start_in_thread()

    def __exit__(self, *exc: object) -> None:
        self.stop_in_thread()

    # ---- HTTP handlers --------------------------------------------------------------------------

    async def _record(self, request: web.Request) -> RecordedRequest:
        body = await request.read()
        try:
            parsed = json.loads(body) if body else None
        except ValueError:
            parsed = None
        record = RecordedRequest(method=request.method, path=request.path,
                                 headers={k.lower(): v for k, v in request.headers.items()},
                                 json=parsed, body=body, received_at=time.monotonic())
        (self.probe_requests if record.headers.get(PROBE_HEADER.lower()) else self.requests).append(record)
        return record

    def _auth_error(self, record: RecordedRequest) -> FakeReply | None:
        if self.api_key is not None and record.authorization != f"Bearer {self.api_key}":
            return FakeReply.http_error(401, "Incorrect API key provided.", code="invalid_api_key")
        return None

    async def _chat(self, request: web.Request) -> web.StreamResponse:
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        started = time.monotonic()
        try:
            self.posts += 1
            if self.die_after is not None and self.posts >= self.die_after:
                sys.stdout.flush()
                os.kill(os.getpid(), self.die_signal)  # a model server crashing mid-request
            record = await self._record(request)
            reply = self._auth_error(record) or self._validate(record)
            if reply is None and record in self.probe_requests:
                # a dialect probe or the priming: counted below like any request, never scripted
                priming = record.headers.get(PROBE_HEADER.lower()) == "prime"
                reply = FakeReply.ok("OK", delay=self.prime_delay if priming else self.probe_delay)
            if reply is None:
                reply = await self._next_reply(record.json)
            if wants_stream(record.json) and reply.status < 400 and not (reply.drop or reply.truncate) \
                    and reply.raw_body is None:
                # Its own task: the "model" goes on after its client left until it notices, as a real one does.
                return await asyncio.shield(asyncio.ensure_future(self._stream(request, reply, record)))
            return await self._send(request, reply, record.json)
        finally:
            self.in_flight -= 1
            # The "model's" own time for this request, as a client would have to wait for it.
            self.answer_seconds.append(time.monotonic() - started)

    def _validate(self, record: RecordedRequest) -> FakeReply | None:
        body = record.json
        if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
            return FakeReply.http_error(400, "request body must be a JSON object with 'messages'")
        rf_type = record.response_format_type
        if rf_type is not None and rf_type in self.reject_response_formats:
            return FakeReply.http_error(400, f"response_format {rf_type} not supported", param="response_format")
        if self.refuses_images and record.image_urls():
            return FakeReply.http_error(500, "Unsupported content part type: image_url")
        if "grammar" in body and (self.refuses_grammar or not self.llama_props):
            return FakeReply.http_error(400, "Failed to parse grammar")
        if "grammar" in body and "response_format" in body:
            return FakeReply.http_error(400, "Cannot use both json_schema and grammar")  # llama-server's rule
        if self.context_window is not None:
            prompt = self._window_tokens(body)
            answer = int(body.get("max_tokens") or body.get("max_completion_tokens") or 0)
            if prompt + answer > self.context_window:
                return FakeReply.http_error(
                    400, f"This model's maximum context length is {self.context_window} tokens. However, you "
                         f"requested {prompt + answer} tokens ({prompt} in the messages, {answer} in the completion). "
                         "Please reduce the length of the messages or completion.",
                    param="messages", code="context_length_exceeded")
        return None

    async def _next_reply(self, body: dict[str, Any]) -> FakeReply:
        if self.queue:
            return self.queue.popleft()
        if self.responder is not None:
            reply = self.responder(body)
            if inspect.isawaitable(reply):
                reply = await reply
            if reply is not None:
                return reply
        if self.random_schema is not None:
            schema = request_schema(body)
            if schema is not None:
                data = random_instance(schema, self.rng, self.random_schema)
                return FakeReply.ok_json(data, delay=self.default_delay)
        return FakeReply(delay=self.default_delay)

    async def _send(self, request: web.Request, reply: FakeReply, body: Any) -> web.StreamResponse:
        content = self.default_content if reply.content is None else reply.content
        delay = reply.delay + reply.piece_delay * pieces(content)
        if self.llama_cpp_python:
            # Shielded: a client that leaves ends this handler, not the "model's" work on its request.
            await asyncio.shield(asyncio.ensure_future(self._serially(delay)))
        elif delay > 0:
            await asyncio.sleep(delay)
        if reply.drop:
            _abort(request)
            # aiohttp needs a return value; the transport is gone so nothing reaches the client.
            return web.Response(status=204)
        if reply.raw_body is not None:
            return web.Response(status=reply.status, text=reply.raw_body, headers=reply.headers,
                                content_type="application/json")
        if reply.status >= 400:
            error = {"message": reply.error_message, "type": reply.error_type,
                     "param": reply.error_param, "code": reply.error_code}
            return web.json_response({"error": error}, status=reply.status, headers=reply.headers)
        payload = json.dumps(self._completion(reply, body)).encode()
        if reply.truncate:
            response = web.StreamResponse(status=200, headers={**reply.headers, "Content-Type": "application/json"})
            response.content_length = len(payload)
            await response.prepare(request)
            await response.write(payload[: len(payload) // 2])
            _abort(request)
            return response
        return web.Response(status=reply.status, body=payload, headers=reply.headers,
                            content_type="application/json")

    async def _stream(self, request: web.Request, reply: FakeReply, record: RecordedRequest) -> web.StreamResponse:
        """The answer as server-sent events, a piece at a time. As llama-cpp-python's server does (its
        ``get_event_publisher``): one request at a time there (the lock held to the last event), the
        prompt read (``delay``) never stopped, and a client gone is noticed after each event written:
        the "model" stops there and the next request is served."""
        body = record.json
        events = stream_events(self._completion(reply, body), usage=wants_usage(body) and not self.llama_cpp_python)
        response = web.StreamResponse(status=200, headers={**reply.headers, "Content-Type": "text/event-stream",
                                                           "Cache-Control": "no-cache"})
        async with self._one_at_a_time if self.llama_cpp_python else contextlib.nullcontext():
            try:
                await asyncio.sleep(reply.delay)
                await response.prepare(request)
                for index, event in enumerate(events):
                    if index > 1:  # the role's event and the first piece come together
                        await asyncio.sleep(reply.piece_delay)
                    await response.write(sse(event))
                    record.streamed_events += 1
                    if request.transport is None or request.transport.is_closing():
                        raise ConnectionResetError("client gone")
                await response.write(DONE)
                await response.write_eof()
            except (ConnectionResetError, RuntimeError):  # aiohttp's writes to a closed connection
                record.disconnected = True
            finally:
                record.ended_at = time.monotonic()
        return response

    async def _serially(self, seconds: float) -> None:
        async with self._one_at_a_time:
            await asyncio.sleep(seconds)

    def _completion(self, reply: FakeReply, body: dict[str, Any]) -> dict[str, Any]:
        self._completions += 1
        content = self.default_content if reply.content is None else reply.content
        # Rough token counts (4 characters a token) unless the script gives exact ones.
        prompt = reply.prompt_tokens if reply.prompt_tokens is not None else self._prompt_tokens(body)
        completion = reply.completion_tokens if reply.completion_tokens is not None else len(content) // 4 + 1
        return {
            "id": f"chatcmpl-fake-{self._completions}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": reply.model or str(body.get("model") or self.model),
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content},
                         "finish_reason": reply.finish_reason, "logprobs": None}],
            "usage": {"prompt_tokens": prompt, "completion_tokens": completion,
                      "total_tokens": prompt + completion},
        }

    def _prompt_tokens(self, body: dict[str, Any]) -> int:
        """What a server counts: the messages it keeps, about 4 characters a token (images as their
        base64, more than any server counts, so a prompt that arrives is never counted short)."""
        kept = [m for m in body.get("messages") or [] if isinstance(m, dict)
                and not (self.drops_system and m.get("role") == "system")
                and not (self.drops_parts and isinstance(m.get("content"), list))]
        return len(json.dumps(kept)) // 4 + TEMPLATE_TOKENS

    @staticmethod
    def _window_tokens(body: dict[str, Any]) -> int:
        """What a context window holds of a request: its text (4 characters a token) and a fixed
        share per picture, as vision models count them (OpenAI: 85 to about 1,100 a picture)."""
        texts, pictures = [], 0
        for message in body.get("messages") or []:
            content = message.get("content") if isinstance(message, dict) else None
            parts = content if isinstance(content, list) else [content]
            for part in parts:
                if isinstance(part, dict) and part.get("type") == "image_url":
                    pictures += 1
                else:
                    texts.append(json.dumps(part))
        return sum(len(t) for t in texts) // 4 + WINDOW_TOKENS_PER_IMAGE * pictures + TEMPLATE_TOKENS

    async def _models(self, request: web.Request) -> web.Response:
        record = await self._record(request)
        denied = self._auth_error(record)
        if denied is not None:
            return await self._send(request, denied, None)  # type: ignore[return-value]
        entry: dict[str, Any] = {"id": self.model, "object": "model", "created": 0, "owned_by": "fake"}
        if self.llama_cpp_python:
            entry = {"id": self.model, "object": "model", "owned_by": "me", "permissions": []}
        if self.tells_window and self.context_window is not None:
            entry["max_model_len"] = self.context_window
        return web.json_response({"object": "list", "data": [entry]})

    async def _props(self, request: web.Request) -> web.Response:
        await self._record(request)
        if not self.llama_props:
            return web.json_response({"error": "Not Found"}, status=404)
        return web.json_response({"default_generation_settings": {"n_ctx": self.context_window or 4096},
                                  "total_slots": 1, "model_path": f"/models/{self.model}.gguf"})

    async def _stats(self, request: web.Request) -> web.Response:
        return web.json_response(self.stats())

    async def _timings(self, request: web.Request) -> web.Response:
        return web.json_response({"answer_seconds": list(self.answer_seconds)})

    async def _reset(self, request: web.Request) -> web.Response:
        self.reset()
        return web.json_response(self.stats())

    async def _enqueue(self, request: web.Request) -> web.Response:
        items = await request.json()
        self.enqueue(*(FakeReply.from_dict(item) for item in items))
        return web.json_response({"queued": len(self.queue)})


def _abort(request: web.Request) -> None:
    transport = request.transport
    if transport is not None:
        transport.abort()


# ---- command line ---------------------------------------------------------------------------------


def _parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m agent.core.testing.fake_openai",
                                     description="Fake OpenAI-compatible Chat Completions server for tests and "
                                                 "benchmarks.")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port (printed on stdout)")
    parser.add_argument("--delay", type=float, default=0.0, help="seconds before each default reply")
    parser.add_argument("--reply", default=DEFAULT_CONTENT, help="assistant content of the default reply")
    parser.add_argument("--reply-file", type=Path, help="read the default reply content from this file")
    parser.add_argument("--replies", type=Path, help="JSON list of FakeReply objects served first, in order")
    parser.add_argument("--api-key-env", help="require 'Bearer $VAR' (the key is read from this env variable)")
    parser.add_argument("--reject-response-format", action="append", default=[], metavar="TYPE",
                        help="answer 400 to this response_format type (json_schema, json_object); repeatable")
    parser.add_argument("--model", default=DEFAULT_MODEL)
    parser.add_argument("--mode", choices=sorted(RESPONDERS), help="answer structured requests this way "
                        "(first-enum: the first value of every enum, the first non-null branch of every anyOf)")
    parser.add_argument("--random-schema", action="store_true",
                        help="answer requests naming a JSON Schema with a random instance of it")
    parser.add_argument("--null-rate", type=float, default=0.5, help="random-schema: chance a nullable field is null")
    parser.add_argument("--seed", type=int, default=None, help="random-schema: seed for reproducible answers")
    parser.add_argument("--enum-weight", action="append", default=[], metavar="PROP=VALUE:WEIGHT",
                        help="random-schema: weight of one enum value of a property (others weigh 1); repeatable")
    parser.add_argument("--port-file", type=Path, help="also write the chosen port to this file")
    parser.add_argument("--die-after", type=int, metavar="N",
                        help="kill this process with --die-signal on the N-th chat POST (a crashing model server)")
    parser.add_argument("--die-signal", default="SIGSEGV", choices=[s.name for s in signal.Signals],
                        help="the signal --die-after dies of")
    return parser.parse_args(argv)


def _enum_weights(specs: list[str]) -> dict[str, dict[str, float]]:
    weights: dict[str, dict[str, float]] = {}
    for spec in specs:
        prop, _, rest = spec.partition("=")
        value, _, weight = rest.rpartition(":")
        if not prop or not value:
            raise SystemExit(f"--enum-weight {spec!r}: expected PROP=VALUE:WEIGHT")
        weights.setdefault(prop, {})[value] = float(weight)
    return weights


async def _serve(args: argparse.Namespace) -> dict[str, int]:
    content = args.reply_file.read_text(encoding="utf-8") if args.reply_file else args.reply
    replies = ([FakeReply.from_dict(d) for d in json.loads(args.replies.read_text(encoding="utf-8"))]
               if args.replies else [])
    api_key = os.environ.get(args.api_key_env) if args.api_key_env else None
    fake = FakeOpenAI(default_content=content, default_delay=args.delay, replies=replies, api_key=api_key,
                      reject_response_formats=args.reject_response_format, model=args.model,
                      host=args.host, port=args.port, responder=RESPONDERS.get(args.mode or ""), seed=args.seed,
                      random_schema=RandomSchemaOptions(null_rate=args.null_rate,
                                                        enum_weights=_enum_weights(args.enum_weight))
                      if args.random_schema else None)
    fake.die_after, fake.die_signal = args.die_after, signal.Signals[args.die_signal]
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    async with fake:
        if args.port_file:
            args.port_file.write_text(str(fake.port), encoding="utf-8")
        print(f"fake OpenAI server listening on {fake.base_url}", flush=True)
        await stop.wait()
        return fake.stats()


def main(argv: list[str] | None = None) -> int:
    args = _parse_args(argv)
    stats = asyncio.run(_serve(args))
    print(json.dumps(stats), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
