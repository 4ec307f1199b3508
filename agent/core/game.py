"""What a game gives the core, and what the core does with it.

A game is a folder under ``agent/games/`` whose ``game.py`` defines ``GAME = Game(...)``. The core
(through ``python -m agent``) reads the config, applies the game's command-line flags, runs the
game's start-up checks, sets up logging with secrets masked, and then hands over to the game's
``main``. Everything else a game needs (the LLM client, templates, transcripts, redaction, memory,
the fake LLM server for tests) it imports from ``agent.core`` as a library.

Transports differ too much to share a class (the tangram game dials us over WebSocket, Forge posts
HTTP to us, the bee arena and the Boardgame engines are servers we dial), so a game is a handful
of functions and a config model, not a subclass.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import importlib
import signal
from collections.abc import Callable, Coroutine, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from agent.core.config import GameConfig

if TYPE_CHECKING:
    from agent.core.llm.sample import LLMSample
    from agent.core.studies.run import StudyRun

T = TypeVar("T")


def _no_arguments(group: argparse._ArgumentGroup) -> None:
    return None


def _keep_config(config: Any, args: argparse.Namespace) -> Any:
    return config


def _no_check(config: Any) -> None:
    return None


def lazy_llm_sample(module: str) -> Callable[[Any], LLMSample]:
    """``module``'s ``llm_sample``, imported at the first call: listing the games stays light."""

    def sample(config: Any) -> LLMSample:
        made: LLMSample = importlib.import_module(module).llm_sample(config)
        return made

    return sample


@dataclass(frozen=True)
class Game:
    name: str
    """What ``--game`` and a config's ``game:`` field say."""
    summary: str
    """One line for ``python -m agent --help``."""
    config_model: type[GameConfig]
    """The game's config: :class:`GameConfig` plus its own sections; defaults give the offline player."""
    main: Callable[[Any, argparse.Namespace], Coroutine[Any, Any, int]]
    """Runs the game with a checked config; returns the exit status."""
    add_arguments: Callable[[argparse._ArgumentGroup], None] = _no_arguments
    """Adds the game's own flags (e.g. ``--port`` for a server, ``--connect`` for a client)."""
    apply_arguments: Callable[[Any, argparse.Namespace], Any] = _keep_config
    """Returns the config with the flags applied (flags override the config file)."""
    check: Callable[[Any], None] = _no_check
    """Start-up checks beyond the config's own validation (templates, keys, data files); raises
    ConfigError or PromptError with a one-line reason, before anything listens or dials."""
    llm_sample: Callable[[Any], LLMSample] | None = None
    """A decision request as the LLM player sends it (its templates rendered with their sample
    context, its pictures when the config sends them, its decision schema): what ``--check-llm``
    sends, so the check tries what play will try."""
    serve_study: Callable[[StudyRun, argparse.Namespace], Coroutine[Any, Any, int]] | None = None
    """Serves a study (``python -m agent --study FILE``): like ``main``, but each new game asks
    ``run.current()`` for its participant and condition and plays ``assignment.config``
    (agent/core/studies/run.py). The run is open and every condition's config checked (the game's
    flags applied, ``check`` passed) before it is called. None: the game serves no study yet."""


@contextlib.contextmanager
def stop_signals() -> Iterator[asyncio.Event]:
    """Catches SIGINT and SIGTERM from now on: the event is set at the first one; after the block a
    second one takes the default way out (at once).

    Enter it before announcing that the game is ready: whoever reads the announcement may signal
    at once, and a signal that arrives before the handlers are in kills the process unflushed.
    """
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    signals = (signal.SIGINT, signal.SIGTERM)
    for sig in signals:
        loop.add_signal_handler(sig, stop.set)
    try:
        yield stop
    finally:
        for sig in signals:
            loop.remove_signal_handler(sig)


class Interrupted(Exception):
    """A SIGINT or SIGTERM ended the work before it finished."""


async def run_interruptible(work: Coroutine[Any, Any, T]) -> T:
    """``work``'s result, unless SIGINT or SIGTERM comes first: then ``work`` is cancelled (so it can
    leave its peer and flush its transcript), awaited, and :class:`Interrupted` is raised.

    For client-side games' ``main``: one match from dial to the end, stoppable by Ctrl-C.
    """
    with stop_signals() as stop:
        task = asyncio.create_task(work)
        stopped = asyncio.create_task(stop.wait())
        try:
            await asyncio.wait({task, stopped}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            stopped.cancel()
        if not task.done():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
            raise Interrupted
        return task.result()
