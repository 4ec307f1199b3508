"""Collect a real model's raw replies to tangram chat requests, asked exactly as the LLM player asks.

Keeps what the model said (degenerate answers included) in a YAML fixture that
tests/tangram/llm_player/test_real_chat_replies.py replays through the LLM player, so the handling of real
answers is tested without the model. By default it starts the local model (Gemma 3 270M on
llama-cpp-python, the ``[local]`` extra) and asks it the lines of tests/tangram/dialogue/chat_phrasings.yaml
said in the "fish" game (objective "A fish", two pieces the agent placed, Purple the partner's)::

    python -m benchmarks.tangram.collect_chat_replies --limit 30
    python -m benchmarks.tangram.collect_chat_replies --base-url http://127.0.0.1:8080/v1 --model gemma-3-270m

It prints each line, the model's reply and whether the player showed it, then a count.
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

from agent.core.local_model import MODEL_ALIAS, LocalModelServer
from agent.core.memory import Memory
from agent.core.transcript import Transcript
from agent.games.tangram.contract import TurnView
from agent.games.tangram.link.factory import PlayerFactory
from agent.games.tangram.protocol import GameState, OnBoardPiece
from benchmarks.llm_real import runs

ROOT = Path(__file__).resolve().parents[2]
TABLE = ROOT / "tests" / "tangram" / "dialogue" / "chat_phrasings.yaml"
OUT = ROOT / "tests" / "tangram" / "llm_player" / "real_chat_replies.yaml"
FISH_STATE = {
    # The "fish" game of chat_phrasings.yaml as the game reports it (markers, degrees).
    "Cream": OnBoardPiece(position=(50.6, 52.5), vertices=[], rotation=270.0),
    "Red": OnBoardPiece(position=(60.4, 50.0), vertices=[], rotation=90.0),
    "Purple": OnBoardPiece(position=(88.0, 88.0), vertices=[], rotation=0.0),
}
MOVERS = {"Cream": "agent", "Red": "agent", "Purple": "partner"}


class Recorder(Transcript):
    """A transcript that keeps its records in memory."""

    def __init__(self) -> None:
        super().__init__(None)
        self.records: list[dict[str, Any]] = []

    def record(self, kind: str, **fields: Any) -> None:
        self.records.append({"kind": kind, **fields})


HEADER = ("# Raw replies of a real model to chat requests (benchmarks/tangram/collect_chat_replies.py).\n"
          "# shown_when_kept: what the LLM player did with the reply when it was collected; expect: what it must do\n"
          "# (set by reading the reply; tests/tangram/llm_player/test_real_chat_replies.py checks it).\n")


def save(kept: list[dict[str, Any]], out: Path) -> None:
    out.write_text(HEADER + yaml.safe_dump(kept, allow_unicode=True, sort_keys=False, width=110), encoding="utf-8")


async def collect(base_url: str, model: str, lines: list[str], out: Path) -> list[dict[str, Any]]:
    with tempfile.TemporaryDirectory() as tmp:
        config = runs.localised("tangram", base_url, model, Path(tmp), local=True)
    factory = PlayerFactory(config)
    kept: list[dict[str, Any]] = []
    for line in lines:
        transcript = Recorder()
        player: Any = factory(transcript)
        raw: dict[str, Any] = {}
        complete = player.client.complete_json

        async def spy(*args: Any, _complete: Any = complete, _raw: dict[str, Any] = raw, **kwargs: Any) -> Any:
            result = await _complete(*args, **kwargs)
            _raw.update(text=result.text, data=result.data, error=result.error)
            return result

        player.client.complete_json = spy
        memory = Memory(12)
        memory.add("agent", "I placed Red as the body, next to the back.")
        memory.add("player", line)
        view = TurnView(objective="A fish", state=GameState(on_board=dict(FISH_STATE)), memory=memory,
                        board_png=None, drawer_png=None, message=line, movers=dict(MOVERS))
        started = time.monotonic()
        shown = await player.chat(view)
        replaced = [r for r in transcript.records if r["kind"] == "chat_replaced"]
        entry = {"say": line, "model": model, "text": raw.get("text", ""),
                 "reply": (raw.get("data") or {}).get("reply") if isinstance(raw.get("data"), dict) else None,
                 "error": raw.get("error"), "seconds": round(time.monotonic() - started, 1),
                 "shown_when_kept": "replaced" if replaced else "model",
                 "why": replaced[0]["reason"] if replaced else None, "shown": shown}
        entry["expect"] = entry["shown_when_kept"]  # to be checked by reading the reply
        kept.append(entry)
        save(kept, out)  # a slow model may not get through all lines: keep each as it comes
        print(f"{line!r:50} model={entry['reply'] if entry['reply'] is not None else entry['text']!r:.80} "
              f"-> {entry['shown_when_kept']} ({entry['why']}) {entry['seconds']} s", flush=True)
    return kept


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base-url", help="a running OpenAI-compatible server (default: start the local model)")
    parser.add_argument("--model", default=MODEL_ALIAS)
    parser.add_argument("--limit", type=int, default=30, help="how many lines of the table to ask")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    rows = yaml.safe_load(TABLE.read_text(encoding="utf-8"))
    lines = list(dict.fromkeys(r["say"] for r in rows if r["scenario"] == "fish"))[:args.limit]
    server = None if args.base_url else LocalModelServer().start()
    try:
        base_url = args.base_url or (server.base_url if server else "")
        kept = asyncio.run(collect(base_url, args.model, lines, args.out))
    finally:
        if server is not None:
            server.stop()
    replaced = sum(1 for k in kept if k["shown_when_kept"] == "replaced")
    print(f"{len(kept)} replies kept in {args.out}; {replaced} not shown (degenerate), {len(kept) - replaced} shown")


if __name__ == "__main__":
    main()
