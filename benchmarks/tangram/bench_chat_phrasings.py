"""How many chat lines the offline player answers right, and how fast.

Two formats of line tables are read (any file in either; each line is said on a fresh game in its
scenario, as tests/tangram/dialogue/chat_phrasings.yaml's header describes):

* by reply kind (``tests/tangram/dialogue/chat_phrasings.yaml``): ``{say, scenario, kind: [...],
  says, never, then, figure}``, the phrase keys of the right replies;
* by meaning (``tests/tangram/dialogue/chat_dev.yaml``, the four seen sets ``chat_seen.yaml``
  to ``chat_seen4.yaml``, and a held-back set written separately):
  ``{say, lang, scenario, intent, reply_lang, says_any, never, acts}``.

A line is right when the reply is of a kind that fits (its phrase key, mapped from the intent by
:data:`INTENT_KINDS`; a meaning declared in ``dialogue/words/meanings.yaml``, its own name), is
not the "didn't understand" fallback (except for another language), is in ``reply_lang`` (a line
in another language may also be answered in its own), holds one of
``says_any`` / all of ``says`` and none of ``never``, says nothing false of owners or counts, and
its ``acts`` hold over the game's next turns, played by the planner: ``next_piece_in`` (its next
piece played is one of these), ``keeps_partner_pieces`` and ``keeps_piece`` (for the rest of the
game: up to :data:`REST_TURNS` turns), ``figure`` (the figure it builds).

    python -m benchmarks.tangram.bench_chat_phrasings                     # the six development tables
    python -m benchmarks.tangram.bench_chat_phrasings --table FILE [...]  # any table

It prints each wrong line with what is wrong, "N of M lines answered right" per table, and the
answer times (p50, p99, max; the models loaded before the first line, their load time apart).
"""

from __future__ import annotations

import argparse
import re
import statistics
import sys
import time
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

sys.path.insert(0, str(Path.cwd()))

from agent.games.tangram.dialogue.language import load_languages
from agent.games.tangram.dialogue.phrases import load_phrases
from agent.games.tangram.dialogue.understand import warm
from agent.games.tangram.geometry.frames import Pose
from agent.games.tangram.geometry.pieces import PIECE_NAMES
from agent.games.tangram.offline.agent import OfflineAgent
from agent.games.tangram.planner import load_library
from agent.games.tangram.planner.library import FigureLibrary

TABLES = Path(__file__).resolve().parents[2] / "tests" / "tangram" / "dialogue"
DEFAULT_TABLES = (TABLES / "chat_phrasings.yaml", TABLES / "chat_dev.yaml", TABLES / "chat_seen.yaml",
                  TABLES / "chat_seen2.yaml", TABLES / "chat_seen3.yaml", TABLES / "chat_seen4.yaml")
PIECES = "|".join(PIECE_NAMES)
REST_TURNS = 8
"""Turns played after a line whose constraint must hold "for the rest of the game"."""
NEXT_TURNS = 3
FALLBACK = "fallback"
INTENT_KINDS: dict[str, frozenset[str]] = {k: frozenset(v) for k, v in {
    "praise": ["praise"],
    "thanks": ["thanks"],
    "ack": ["ack"],
    "strategy": ["strategy_big", "strategy_small", "strategy_part", "strategy_where", "strategy_done", "prefer_ok",
                 "prefer_move", "prefer_done", "next_done", "handover_ok", "strategy_theirs"],
    # "leave my square alone": the one piece of theirs named is kept (keeps_partner_pieces checks the rest).
    "keep_mine": ["keep_ok", "keep_piece_ok"],
    # "use my square, it's in the wrong spot": that piece moved to its spot next acts on the consent.
    "may_move_mine": ["release_ok", "prefer_move"],
    # "wait!", "essa não!" while the agent moves: it passes its next turn.
    "wait": ["wait_ok"],
    # "I'll place the square myself": that piece left to them.
    "keep_piece": ["keep_piece_ok", "keep_piece_theirs"],
    "unknown_figure": ["unknown_figure", "switch_unknown", "switch_related"],
    "spatial": ["spatial_space", "spatial_symmetry", "spatial_part", "resize"],
    # "put one in near the tail": the piece of that part next, as for "the tail first".
    # "put whatever fits next": the piece it places next, named.
    "vague_request": ["vague_ok", "vague_move", "vague_done", "vague_in_place", "prefer_ok", "prefer_move",
                      "assign_kind_next", "strategy_where", "strategy_part", "next", "next_move", "next_done"],
    "place": ["place_near_ok", "place_near_off_board", "place_near_no_anchor", "place_near_same", "prefer_ok",
              "prefer_move", "prefer_done", "assign_ok", "assign_already", "assign_kind_next", "assign_no_part_next",
              "move_ok",
              "move_place_first", "vague_ok", "vague_move"],
    "rotate": ["rotate_ok", "rotate_place_first", "rotate_not_on_board"],
    # "what should I do next?" asks for the next step; a suggestion for the partner's own turn answers it.
    "question_next": ["next", "next_move", "next_done", "stuck", "for_you"],
    # "are you going to move my pieces?", "did you move my square?": whether it moves (or moved) them.
    "question_plan": ["plan", "switch_same", "pieces_question"],
    # "where will you put the next piece?": the next piece and the part it goes to.
    "question_where": ["where", "for_you", "unclear", "prefer_done", "pieces_question", "next", "next_move"],
    "question_progress": ["progress", "next_done"],
    "other_language": ["other_language"],
}.items()}
"""The reply kinds (phrase keys of planner/phrases.yaml) that fit each intent of the by-meaning format."""


@dataclass
class Game:
    planner: OfflineAgent
    objective: str
    board: dict[str, Pose]
    movers: dict[str, str]
    seconds: list[float] = field(default_factory=list)
    """Each answer's wall time and CPU time (this thread's), in seconds."""
    said: list[str] = field(default_factory=list)
    """The planner's line on each turn played."""
    cpu: list[float] = field(default_factory=list)

    def say(self, line: str) -> str:
        started, cpu = time.perf_counter(), time.thread_time()
        reply = self.planner.chat(self.objective, self.board, line, self.movers)
        self.seconds.append(time.perf_counter() - started)
        self.cpu.append(time.thread_time() - cpu)
        return reply

    def play(self) -> Pose | None:
        d = self.planner.play(self.objective, self.board, self.movers)
        self.said.append(d.chat)
        if d.pose is not None:
            self.board[d.pose.piece] = d.pose
            self.movers[d.pose.piece] = "agent"
        return d.pose


def scenario(name: str, library: FigureLibrary) -> Game:
    """The games of the tables: see chat_phrasings.yaml's header."""
    objective = {"fish": "A fish", "empty": "A house", "done": "A house"}[name]
    game = Game(OfflineAgent(library), objective, {}, {})
    for _ in range({"fish": 2, "empty": 0, "done": 7}[name]):
        assert game.play() is not None
    if name == "fish":  # the partner's piece, away from the figure
        game.board["Purple"] = Pose("Purple", 88.0, 88.0, 0.0)
        game.movers["Purple"] = "partner"
    return game


def _fold(text: str) -> str:
    text = unicodedata.normalize("NFKD", text.lower())
    return "".join(ch for ch in text if not unicodedata.combining(ch))


def _has(reply: str, word: str) -> bool:
    return word.lower() in reply.lower() or _fold(word) in _fold(reply)


def false_claims(game: Game, reply: str) -> list[str]:
    """What the reply says falsely of owners, counts and the board (English and Portuguese lines)."""
    fit = game.planner.fit(game.board, commit=False)
    owners = {"your": "partner", "my": "agent", "teu": "partner", "meu": "agent"}
    names = {name: piece for piece, name in load_phrases(lang="pt").names.items()} | {p: p for p in PIECE_NAMES}
    said = "|".join(re.escape(n) for n in names)
    out = [f"{m.group(0)} is wrong" for m in re.finditer(rf"\b(your|my|teu|meu) ({said})\b", reply)
           if game.movers.get(names[m.group(2)]) != owners[m.group(1)]]
    out += ["wrong count" for m in re.finditer(r"\b(\d) (?:of|de) 7 (?:pieces|peças) (?:are |estão )?"
                                               r"(?:in place|no sítio)", reply) if int(m.group(1)) != len(fit.matched)]
    out += [f"promises to place {m.group(1)}, already on the board"
            for m in re.finditer(rf"I'll place ({PIECES})\b", reply) if m.group(1) in game.board]
    return out


def reply_language(reply: str) -> str:
    return load_languages().detect(reply)


def check_acts(game: Game, acts: Mapping[str, Any]) -> list[str]:
    """Play the next turns and check what the line asked for holds."""
    out: list[str] = []
    partner = {p for p, m in game.movers.items() if m == "partner"}
    kept = acts.get("keeps_piece")
    before = {p: game.board.get(p) for p in PIECE_NAMES}
    played: list[str] = []
    rest = any(k in acts for k in ("keeps_partner_pieces", "keeps_piece"))
    for _ in range(REST_TURNS if rest else NEXT_TURNS):
        pose = game.play()
        if pose is None:
            continue
        played.append(pose.piece)
        if acts.get("keeps_partner_pieces") and pose.piece in partner:
            out.append(f"moved the partner's {pose.piece}")
        if kept and pose.piece == kept:
            out.append(f"moved {kept}")
    if kept and game.board.get(kept) != before.get(kept):
        out.append(f"{kept} is not where it was")
    wanted: list[str] = acts.get("next_piece_in") or []
    # A promised move or turn that cannot be made is kept by saying so truthfully on that turn.
    couldnt = bool(wanted) and any(_couldnt(game, piece) in said for said in game.said[:1] for piece in wanted)
    if wanted and not couldnt and (not played or played[0] not in wanted):
        out.append(f"next piece {played[0] if played else 'none'}, not one of {wanted}")
    if "figure" in acts and game.planner.figure.name != acts["figure"]:
        out.append(f"builds {game.planner.figure.name}, not {acts['figure']}")
    return out


def _couldnt(game: Game, piece: str) -> str:
    """The start of the planner's truthful line for a promised move of ``piece`` it could not make."""
    lines = game.planner.lines
    starts = []
    for key in ("request_failed", "request_turn_failed", "request_place_failed"):
        text = " ".join(lines.raw("turn", key, piece=piece, direction="", relation="", anchor="").split())
        starts.append(re.split(r" (?:without|sem) ", text)[0])
    return next((s for s in starts if s in "\n".join(game.said[:1])), starts[1])


def cut(reply: str) -> list[str]:
    """A reply longer than a chat line, cut with "…": not said whole."""
    return ["cut at the chat line's length"] if reply.endswith("\u2026") else []


def by_meaning(row: Mapping[str, Any], library: FigureLibrary) -> tuple[str, list[str], list[float], list[float]]:
    game = scenario(row["scenario"], library)
    reply = game.say(row["say"])
    kind = game.planner.last_reply_kind
    intent = row["intent"]
    bad = []
    # A meaning declared in dialogue/words/meanings.yaml is answered by the reply of its own name.
    if kind not in INTENT_KINDS.get(intent, frozenset({intent})):
        bad.append(f"kind {kind} for {intent}")
    if kind == FALLBACK and intent != "other_language":
        bad.append("the didn't-understand fallback")
    lang = reply_language(reply)
    if lang != row["reply_lang"] and not (intent == "other_language" and kind == "other_language"):
        bad.append(f"reply in {lang}, not {row['reply_lang']}")
    words = row.get("says_any") or []
    if words and not any(_has(reply, w) for w in words):
        bad.append(f"none of {words}")
    bad += [f"says {w!r}" for w in row.get("never") or [] if _has(reply, w)]
    bad += false_claims(game, reply) + cut(reply)
    bad += check_acts(game, row.get("acts") or {})
    return reply, bad, game.seconds, game.cpu


def by_kind(row: Mapping[str, Any], library: FigureLibrary) -> tuple[str, list[str], list[float], list[float]]:
    game = scenario(row["scenario"], library)
    reply = game.say(row["say"])
    bad = []
    if game.planner.last_reply_kind not in row["kind"]:
        bad.append(f"kind {game.planner.last_reply_kind}")
    if "Try 'what's next?'" in reply and FALLBACK not in row["kind"]:
        bad.append("stock help line")
    bad += [f"missing {w!r}" for w in row.get("says", []) if not _has(reply, w)]
    bad += [f"says {w!r}" for w in row.get("never", []) if _has(reply, w)]
    bad += false_claims(game, reply) + cut(reply)
    follow = row.get("then")
    if follow is not None:
        again = game.say(follow["say"])
        if game.planner.last_reply_kind not in follow["kind"]:
            bad.append(f"then: kind {game.planner.last_reply_kind}")
        bad += [f"then: missing {w!r}" for w in follow.get("says", []) if not _has(again, w)]
        bad += false_claims(game, again)
    if "figure" in row and game.planner.figure.name != row["figure"]:
        bad.append(f"builds {game.planner.figure.name}, not {row['figure']}")
    return reply, bad, game.seconds, game.cpu


@dataclass
class Score:
    right: int = 0
    wrong: list[str] = field(default_factory=list)
    """Each wrong line with what is wrong and the reply."""
    seconds: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)


def score(rows: list[dict[str, Any]], library: FigureLibrary) -> Score:
    out = Score()
    for row in rows:
        judge = by_meaning if "intent" in row else by_kind
        reply, bad, took, cpu = judge(row, library)
        out.seconds += took
        out.cpu += cpu
        if bad:
            out.wrong.append(f"wrong: {row['say']!r}: {'; '.join(bad)} :: {reply}")
        else:
            out.right += 1
    return out


def _times(label: str, seconds: list[float]) -> str:
    ms = sorted(s * 1000 for s in seconds)
    p99 = ms[min(len(ms) - 1, round(0.99 * (len(ms) - 1)))]
    return f"{label}: p50 {statistics.median(ms):.1f} ms, p99 {p99:.1f} ms, max {ms[-1]:.1f} ms"


def read_table(path: Path) -> list[dict[str, Any]]:
    rows = yaml.safe_load(path.read_text(encoding="utf-8"))
    if not isinstance(rows, list) or not all(isinstance(r, dict) and "say" in r for r in rows):
        raise SystemExit(f"{path}: a YAML list of lines with 'say' is expected")
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--table", type=Path, action="append", help="a table of lines (repeatable)")
    args = parser.parse_args()
    started = time.perf_counter()
    library = load_library()
    print(f"load: figure library {time.perf_counter() - started:.2f} s")
    started = time.perf_counter()
    warm()
    print(f"load: language identifier, intent model and lines {time.perf_counter() - started:.2f} s")
    seconds: list[float] = []
    cpu: list[float] = []
    for path in args.table or DEFAULT_TABLES:
        rows = read_table(path)
        result = score(rows, library)
        seconds += result.seconds
        cpu += result.cpu
        for line in result.wrong:
            print(line)
        print(f"{path.name}: {result.right} of {len(rows)} lines answered right")
    if seconds:
        print(f"answer time over {len(seconds)} lines, " + _times("wall", seconds) + "; " + _times("cpu", cpu))

if __name__ == "__main__":
    main()
