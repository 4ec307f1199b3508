"""The guard (docs/boardgame.md, "The guard"): win in one, proven losing moves (tic-tac-toe exactly,
over every position; connect four through the search), nothing else, and ``llm.guard`` in a run."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agent.core.testing.fake_openai import FakeOpenAI, FakeReply
from agent.games.boardgame.config import BoardgameConfig
from agent.games.boardgame.players.base import Player, Turn
from agent.games.boardgame.players.guard import (
    ExactProver,
    OnePlyProver,
    SearchProver,
    make_prover,
    review,
)
from agent.games.boardgame.players.guarded import GuardedPlayer
from agent.games.boardgame.players.perfect import Solver
from agent.games.boardgame.rules.base import WireAction
from agent.games.boardgame.rules.connect_four import ConnectFour
from agent.games.boardgame.rules.tictactoe import TicTacToe
from agent.games.boardgame.runner import run
from agent.games.boardgame.testing import legal_moves_in
from tests.boardgame.support import running_engine

TTT = TicTacToe()
C4 = ConnectFour()
PROMPTS_DIR = Path(__file__).resolve().parents[2] / "prompts" / "boardgame"


def after(rules: Any, *moves: int) -> Any:
    position = rules.initial()
    for move in moves:
        position = rules.play(position, move)
    return position


# ---- tic-tac-toe: exact --------------------------------------------------------------------------


def test_a_missed_win_in_one_is_taken() -> None:
    position = after(TTT, 0, 3, 1, 4)  # X: top-left, top-middle; O: two in the middle row; X to move
    override = review(TTT, position, 8, ExactProver(TTT))
    assert override is not None and override.rule == "win-in-one" and override.move == 2
    assert override.reason == "row 1 column 3 wins at once; the model chose row 3 column 3"
    assert review(TTT, position, 2, ExactProver(TTT)) is None


def test_a_proven_losing_move_is_replaced_by_one_that_does_not_lose() -> None:
    position = after(TTT, 0)  # X in a corner: O must take the centre
    override = review(TTT, position, 1, ExactProver(TTT))
    assert override is not None and override.rule == "losing-move" and override.move == 4
    assert "row 1 column 2 loses by force" in override.reason
    assert review(TTT, position, 4, ExactProver(TTT)) is None


def test_a_weak_but_undecided_move_stays_the_models() -> None:
    # X on an edge first gives up its best chances but still draws: not decided, not overridden.
    assert review(TTT, TTT.initial(), 1, ExactProver(TTT)) is None


def _positions() -> list[tuple[int, ...]]:
    seen, stack = set(), [TTT.initial()]
    while stack:
        position = stack.pop()
        if position in seen:
            continue
        seen.add(position)
        stack.extend(TTT.play(position, m) for m in TTT.legal_moves(position))
    return [p for p in seen if TTT.outcome(p) is None]


def test_over_every_tictactoe_position_the_guard_overrides_exactly_the_decided_mistakes() -> None:
    solver = Solver(TTT)
    prover = ExactProver(TTT)
    checked = overridden = 0
    for position in _positions():
        seat = TTT.to_move(position)
        wins = {m for m in TTT.legal_moves(position)
                if (o := TTT.outcome(TTT.play(position, m))) is not None and o.winner == seat}
        value = {m: -solver.value(TTT.play(position, m)) for m in TTT.legal_moves(position)}
        for move in TTT.legal_moves(position):
            checked += 1
            override = review(TTT, position, move, prover)
            if wins:
                assert (override is None) == (move in wins)
                assert override is None or override.move in wins
            elif value[move] < 0 and max(value.values()) >= 0:
                assert override is not None and value[override.move] >= 0
            else:
                assert override is None  # a non-losing move, or every move loses
            overridden += override is not None
    assert checked == 16167 and overridden > 1000  # every (position, move) pair of the game


# ---- connect four: the search --------------------------------------------------------------------


def test_connect_four_takes_the_win_and_blocks_the_threat() -> None:
    x_to_move = after(C4, 0, 6, 1, 6, 2, 5)  # X holds columns 1-3 of the bottom row
    override = review(C4, x_to_move, 5, SearchProver(C4, 0.2))
    assert override is not None and override.rule == "win-in-one" and override.move == 3
    o_to_move = after(C4, 0, 6, 1, 6, 2)
    override = review(C4, o_to_move, 5, SearchProver(C4, 0.2))  # O ignores the threat
    assert override is not None and override.rule == "losing-move" and override.move == 3


def test_connect_four_sees_a_forced_loss_three_plies_deep() -> None:
    # X has columns 2 and 3 of the bottom row with both ends open; O, to move, must take column 1
    # or 4 (or 5): anything else lets X make an open three with two winning cells.
    position = after(C4, 1, 6, 2)
    prover = SearchProver(C4, 0.3)
    assert prover.loses(position, 5)
    override = review(C4, position, 5, prover)
    assert override is not None and override.rule == "losing-move" and override.move in (0, 3, 4)
    assert not prover.loses(position, override.move)
    assert review(C4, position, 3, prover) is None


def test_when_every_move_loses_the_models_move_stands() -> None:
    # O faces two X threats at once (bottom row, columns 1 and 5 both win for X).
    position = after(C4, 1, 6, 2, 6, 3)
    assert all(SearchProver(C4, 0.2).loses(position, m) for m in C4.legal_moves(position) if m not in (0, 4))
    assert review(C4, position, 5, SearchProver(C4, 0.2)) is None


def test_other_games_get_the_one_ply_prover() -> None:
    assert isinstance(make_prover(TTT, 1.0), ExactProver)
    assert isinstance(make_prover(C4, 1.0), SearchProver)
    prover = OnePlyProver(TTT)
    position = after(TTT, 0, 3, 1)  # O must block at 2
    assert prover.loses(position, 8) and not prover.loses(position, 2)
    assert review(TTT, position, 8, prover) is not None


# ---- the guarded player --------------------------------------------------------------------------


class Scripted(Player):
    label = "llm"

    def __init__(self, *actions: WireAction) -> None:
        self.actions = list(actions)

    async def choose(self, turn: Turn) -> WireAction:
        return self.actions.pop(0)


async def test_the_guarded_player_replaces_records_and_passes_illegal_moves_through() -> None:
    records: list[tuple[str, dict[str, Any]]] = []

    class Recorder:
        def record(self, kind: str, **data: Any) -> None:
            records.append((kind, data))

    position = after(TTT, 0, 3, 1, 4)
    player = GuardedPlayer(Scripted(TTT.move_to_action(8), WireAction("place", {"row": 9, "column": 9})),
                           TTT, 0.1, Recorder())  # type: ignore[arg-type]
    action = await player.choose(Turn(TTT, position, 0, 5))
    assert action == TTT.move_to_action(2)
    assert records == [("guard", {"rule": "win-in-one", "model_choice": "row 3 column 3",
                                  "replacement": "row 1 column 3", "engine_turn": 5,
                                  "reason": "row 1 column 3 wins at once; the model chose row 3 column 3",
                                  "replaced_source": "model"})]
    assert [m.move for m in player.moves] == [2] and len(player.overrides) == 1
    illegal = await player.choose(Turn(TTT, position, 0, 5))
    assert illegal.data == {"row": 9, "column": 9} and len(records) == 1  # the client refuses it


# ---- llm.guard in a run against the engine's strong bot ------------------------------------------


def _first_listed(request: dict[str, Any]) -> FakeReply:
    """A model that always names the first legal move listed."""
    return FakeReply.ok_json({"reasoning": "the first one", "move": legal_moves_in(request)[0]})


async def _run(fake: FakeOpenAI, tmp_path: Path, guard: str) -> list[dict[str, Any]]:
    fake.responder = _first_listed
    async with running_engine(games=("tictactoe",), bot="strong", seed=5) as (_engine, url):
        config = BoardgameConfig.model_validate({
            "game": "boardgame", "player": "llm", "prompts_dir": str(PROMPTS_DIR),
            "llm": {"base_url": fake.base_url, "model": "fake-model", "api_key_required": False,
                    "request_timeout": 5, "retry": {"max_attempts": 1}, "guard": guard},
            "engine": {"url": url, "agent_id": "A"}, "play": {"matches": 2, "search_seconds": 0.05},
            "transcripts": {"dir": str(tmp_path / guard)}})
        await run(config)
    records = []
    for path in sorted((tmp_path / guard).glob("*.jsonl")):
        records += [json.loads(line) for line in path.read_text().splitlines()]
    return records


@pytest.mark.parametrize("guard", ["decided", "off"])
async def test_guard_decided_keeps_the_draw_and_off_sends_the_raw_model(fake_openai: FakeOpenAI, tmp_path: Path,
                                                                        guard: str) -> None:
    records = await _run(fake_openai, tmp_path, guard)
    results = [r["outcome"] for r in records if r["kind"] == "result"]
    guards = [r for r in records if r["kind"] == "guard"]
    ends = [r for r in records if r["kind"] == "turn_end"]
    assert len(results) == 2 and ends and all(r["outcome"] == "played" and "attempts" in r for r in ends)
    sent = [json.loads(r["frame"])["action"]["data"] for r in records
            if r["kind"] == "frame_out" and '"perform_action"' in r["frame"]]
    asked = [legal_moves_in({"messages": [{"role": "user", "content": m["text"]} for m in r["messages"]]})[0]
             for r in records if r["kind"] == "llm"]
    firsts = [{"row": int(a.split()[1]), "column": int(a.split()[3])} for a in asked]
    if guard == "decided":
        assert "loss" not in results
        assert guards and all(g["turn"] in {e["turn"] for e in ends} for g in guards)
        assert sent != firsts  # the guard changed some of them
    else:
        assert guards == [] and sent == firsts  # every move exactly the model's
