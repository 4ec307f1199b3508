"""The tangram replay page (agent/games/tangram/replay/): its steps from a real simulated session's
transcript, cut and foreign transcripts, privacy and escaping, kept pictures, and the analysis
command writing one page per session. The browser test is test_replay_browser.py."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any

import pytest

from agent.analyze.__main__ import main as analyze_main
from agent.games.tangram.geometry.pieces import PIECES
from agent.games.tangram.pictures.look import BOARD_TEXTURE, HUMAN_TURN_DIM, PIECE_COLORS, piece_color
from agent.games.tangram.replay import ReplayError, transcript_replay
from agent.games.tangram.replay.__main__ import main as replay_main
from agent.games.tangram.replay.board import board_picture, drawer_picture, hex_color
from agent.games.tangram.replay.model import build_replay, source_class
from agent.games.tangram.replay.page import render_page, step_view
from tests.tangram.replay.support import (
    TAGS,
    board_points,
    chat_lines,
    close,
    drawer_points,
    expected_steps,
    parse_points,
    read,
    simulated_transcript,
)


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return simulated_transcript(tmp_path_factory.mktemp("replay"), turns=6)


def test_every_step_shows_the_board_the_state_recorded(session: Path) -> None:
    records = read(session)
    replay = build_replay(records)
    expected = expected_steps(records)
    assert [s.anchor for s in replay.steps] == [a for a, _ in expected]
    assert len(expected) == 1 + 2 * 6
    for step, (anchor, state) in zip(replay.steps, expected, strict=True):
        board, drawer = board_picture(step.board), drawer_picture(step.board)
        if state is None:  # the start: all seven in the drawer
            assert board.shapes == () and len(drawer.shapes) == 7
            continue
        want = board_points(state)
        got = {s.piece: parse_points(s.points) for s in board.shapes}
        assert set(got) == set(want), anchor
        assert all(close(got[n], want[n]) for n in want), anchor
        want_drawer = drawer_points(state)
        got_drawer = {s.piece: parse_points(s.points) for s in drawer.shapes}
        assert set(got_drawer) == set(want_drawer) and all(close(got_drawer[n], want_drawer[n]) for n in want_drawer)


def test_chat_lines_decisions_and_timings_are_those_of_the_transcript(session: Path) -> None:
    records = read(session)
    replay = build_replay(records)
    shown = [(c.who, c.text) for s in replay.steps for c in s.chats]
    assert shown == chat_lines(records) and any(who == "human" for who, _ in shown)
    ai = [s for s in replay.steps if s.kind == "ai"]
    ends = {r["turn"]: r for r in records if r["kind"] == "turn_end"}
    assert [(s.outcome, s.seconds) for s in ai] == [(ends[s.turn]["outcome"], ends[s.turn]["seconds"]) for s in ai]
    decisions = [r for r in records if r["kind"] == "decision"]
    assert [(d["source"], d["reasoning"]) for s in ai for d in s.decisions] == [
        (d["source"], d["reasoning"]) for d in decisions]
    assert {d["class"] for s in ai for d in s.decisions} == {"planner"}
    plays = [r["frame"] for r in records if r["kind"] == "frame_out" and r["frame"]["type"] == "play"]
    assert [(p["piece"], p["x"], p["y"]) for s in ai for p in s.plays] == [
        (p["shape"], p["position"][0], p["position"][1]) for p in plays]
    # Who moved what: every human step names the human's piece, every AI step with a play the AI's.
    for s in ai:
        if s.plays:
            assert any(m.startswith(f"AI moved {s.plays[-1]['piece']}") for m in s.moves) or not s.moved


def test_the_page_is_self_contained_named_by_tags_and_light(session: Path) -> None:
    records = read(session)
    page = transcript_replay(records, session)
    assert "participant=P07" in page and "condition=explain" in page
    assert "<title>Tangram replay: condition=explain · participant=P07" in page
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", page)  # nothing fetched from anywhere
    assert page.count('<section class="step') == 13
    assert len(page.encode()) < 150_000
    assert records[0]["peer"] not in page  # the peer's address is no business of the page


def test_the_game_look_human_turn_dimming_and_overlap_tint() -> None:
    state = {"on_board": {"Red": {"position": [50.0, 50.0], "rotation": 0.0, "collisions": ["Blue"]},
                          "Blue": {"position": [20.0, 20.0], "rotation": 0.0, "collisions": []}},
             "off_board": {n: {"rotation": PIECES[n].start_rotation}
                           for n in ("Cream", "Green", "Yellow", "Purple", "Brown")}}
    records = [{"t": 1.0, "kind": "session_start", "session": "s", "game": "tangram", "tags": {}},
               {"t": 2.0, "kind": "frame_in", "type": "playRequest", "turn": 1, "state": state}]
    step = build_replay(records).steps[1]
    assert step.moved == ["Red", "Blue"]
    picture = board_picture(step.board, ["Blue"], dim_others=True)
    fills = {s.piece: s for s in picture.shapes}
    assert fills["Blue"].fill == hex_color(PIECE_COLORS["Blue"]) and not fills["Blue"].dimmed
    # Red is dimmed (not the moved piece) and overlap-tinted over the board's panel, as the game draws it.
    assert fills["Red"].dimmed and fills["Red"].tinted
    assert fills["Red"].fill == hex_color(piece_color("Red", dim=True, tint=True, under=BOARD_TEXTURE.median))
    r, g, b = (round(c * HUMAN_TURN_DIM) for c in PIECE_COLORS["Red"])
    assert fills["Red"].fill != hex_color((r, g, b))


def _cut(records: list[dict[str, Any]], turn: int) -> list[dict[str, Any]]:
    """The records up to the middle of AI turn ``turn`` (its feedback never came): a killed agent."""
    out = []
    for r in records:
        if r["kind"] == "frame_in" and r.get("type") == "playFeedback" and r.get("turn") == turn:
            break
        out.append(r)
    return out


def test_a_cut_transcript_gives_the_steps_up_to_its_end_and_says_so(session: Path, tmp_path: Path) -> None:
    records = _cut(read(session), 4)
    replay = build_replay(records)
    assert not replay.ended and replay.steps[-1].anchor == "ai-4" and replay.steps[-1].outcome is None
    assert "ends without a session_end" in (replay.truncated or "") and "AI turn 4" in (replay.truncated or "")
    path = tmp_path / "cut.jsonl"
    text = "\n".join(json.dumps(r) for r in records) + '\n{"t": 1, "kind": "frame_in", "ty'  # a half-written line
    path.write_text(text)
    assert replay_main([str(path), "--out", str(tmp_path / "cut.html")]) == 0
    page = (tmp_path / "cut.html").read_text()
    assert 'id="truncated"' in page and "the turn has no end in the transcript" in page


@pytest.mark.parametrize(("records", "words"), [
    ([{"t": 1, "kind": "session_start", "session": "h", "game": "hive", "tags": {}}], "game 'hive', not tangram"),
    ([{"t": 1, "kind": "session_start", "session": "o", "player": "planner"}], "older than the study records"),
    ([{"t": 1, "kind": "llm", "session": "x"}], "no session_start record"),
    ([], "no records"),
    ([{"t": 1, "kind": "session_start", "session": "o", "game": "tangram"},
      {"t": 2, "kind": "frame_in", "session": "o", "type": "playRequest", "state": "on_board=[]"}],
     "older transcript format"),
])
def test_another_game_or_an_older_transcript_is_one_clear_line(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                               records: list[dict[str, Any]], words: str) -> None:
    with pytest.raises(ReplayError, match=re.escape(words)):
        build_replay(records)
    path = tmp_path / "x.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    assert replay_main([str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and words in err and "Traceback" not in err


def test_all_text_is_escaped_and_withheld_parts_stay_out(session: Path, tmp_path: Path) -> None:
    records = copy.deepcopy(read(session))
    evil = "<script>alert('x')</script><img src=x onerror=alert(1)>"
    for r in records:
        if r["kind"] == "frame_in" and r.get("type") == "chatRequest" and r.get("message"):
            r["message"] = evil
            break
    records[0]["tags"] = {"participant": "</title><script>alert(2)</script>"}
    turn = next(r["turn"] for r in records if r["kind"] == "turn_start")
    at = next(i for i, r in enumerate(records) if r["kind"] == "turn_start")
    records[at + 1:at + 1] = [
        {"t": records[at]["t"], "kind": "system_prompt", "sha256": "abc", "text": "SYSTEM PROMPT TEXT"},
        {"t": records[at]["t"], "kind": "llm", "turn": turn, "purpose": "play", "outcome": "ok", "model": "m",
         "messages": [{"role": "system", "text": "SYSTEM PROMPT TEXT"}, {"role": "user", "text": "board <b>"}],
         "text": "</pre><script>alert(3)</script>", "images": [{"sha256": "ff", "bytes": 9, "file": None}]},
        {"t": records[at]["t"], "kind": "decision", "turn": turn, "source": "llm", "reasoning": "a & b < c",
         "chat": "", "pose": None, "candidate": None}]
    page = transcript_replay(records, tmp_path / "s.jsonl")
    assert "<script>alert" not in page and "<img src=x" not in page
    assert "&lt;script&gt;alert(&#39;x&#39;)" in page and "a &amp; b &lt; c" in page
    assert "SYSTEM PROMPT TEXT" not in page and "board &lt;b&gt;" in page
    assert "[picture ff not kept]" in page


def test_kept_pictures_are_shown_from_the_transcript_folder_and_only_from_there(tmp_path: Path) -> None:
    png = b"\x89PNG\r\n\x1a\n" + b"0" * 40
    (tmp_path / "s.files").mkdir()
    (tmp_path / "s.files" / "aa.png").write_bytes(png)
    (tmp_path.parent / "outside.png").write_bytes(png)
    state: dict[str, Any] = {"on_board": {}, "off_board": {}}
    records = [{"t": 1.0, "kind": "session_start", "session": "s", "game": "tangram", "tags": {}},
               {"t": 2.0, "kind": "frame_in", "type": "playRequest", "turn": 1, "state": state},
               {"t": 2.0, "kind": "turn_start", "turn": 1},
               {"t": 3.0, "kind": "llm", "turn": 1, "purpose": "play", "outcome": "ok",
                "images": [{"sha256": "aa", "bytes": len(png), "file": "s.files/aa.png"},
                           {"sha256": "bb", "bytes": len(png), "file": "../outside.png"}]}]
    page = transcript_replay(records, tmp_path / "s.jsonl")
    assert page.count("data:image/png;base64,") == 1 and 'data-sha="aa"' in page
    assert "[picture bb not kept]" in page


def _state(**on: tuple[float, float]) -> dict[str, Any]:
    """A recorded state with these pieces on the board at rotation 0, none colliding, the drawer empty."""
    return {"on_board": {n: {"position": list(p), "rotation": 0.0, "collisions": []} for n, p in on.items()},
            "off_board": {}}


def test_a_play_the_game_put_back_is_told_apart_from_the_human_move() -> None:
    s = {"t": 0.0, "session": "s"}
    records = [{**s, "kind": "session_start", "game": "tangram", "tags": {}},
               {**s, "kind": "frame_in", "type": "playRequest", "turn": 1, "state": _state(Red=(30, 30))},
               {**s, "kind": "turn_start", "turn": 1},
               {**s, "kind": "frame_out", "turn": 1,
                "frame": {"type": "play", "shape": "Blue", "position": [31, 31], "rotation": 0}},
               {**s, "kind": "frame_in", "type": "playFeedback", "turn": 1,
                "state": _state(Red=(30, 30), Blue=(31, 31))},
               {**s, "kind": "turn_end", "turn": 1, "outcome": "played", "seconds": 1.0},
               {**s, "kind": "frame_in", "type": "playRequest", "turn": 2,
                "state": _state(Red=(30, 30), Green=(80, 80))},
               {**s, "kind": "session_end", "reason": "disconnected"}]
    replay = build_replay(records)
    ai1, human2 = replay.steps[2], replay.steps[3]
    assert ai1.put_back == ["Blue"] and human2.moved == ["Blue", "Green"]
    assert human2.moves[0].startswith("the game put Blue back") and human2.moves[1].startswith("human moved Green")


@pytest.mark.parametrize(("source", "kind"), [
    ("llm", "model"), ("llm+reask+salvage", "model"), ("planner", "planner"), ("fallback", "fallback"),
    ("planner-fallback", "fallback"), ("wizard", "console"), ("llm+approved", "console"), ("llm+edited", "console"),
    ("llm+unreviewed", "model")])
def test_decision_sources_are_classed(source: str, kind: str) -> None:
    assert source_class(source) == kind


def test_analyze_writes_a_replay_per_tangram_session_linked_from_the_summary(session: Path, tmp_path: Path,
                                                                          capsys: pytest.CaptureFixture[str]) -> None:
    src = tmp_path / "t"
    src.mkdir()
    (src / session.name).write_bytes(session.read_bytes())
    (src / "hive.jsonl").write_text(json.dumps({"t": 1, "session": "h", "kind": "session_start", "game": "hive",
                                                "tags": {}}) + "\n")
    (src / "old.jsonl").write_text(json.dumps({"t": 1, "session": "o", "kind": "session_start",
                                               "game": "tangram", "tags": {}}) + "\n" + json.dumps(
        {"t": 2, "session": "o", "kind": "frame_in", "type": "playRequest", "state": []}) + "\n")
    out = tmp_path / "out"
    assert analyze_main([str(src), "--out", str(out)]) == 0
    pages = sorted((out / "replays").glob("*.html"))
    assert [p.name for p in pages] == [session.with_suffix(".html").name]
    summary = (out / "summary.html").read_text()
    assert f'href="replays/{pages[0].name}"' in summary
    assert "condition=explain · participant=P07" in summary
    assert "old.jsonl: no replay: its frames carry no state" in summary
    assert "wrote 1 session replay(s)" in capsys.readouterr().out
    assert all(f"{k} = <b>{v}</b>" in pages[0].read_text() for k, v in TAGS.items())


def test_a_turn_cut_short_by_the_next_request_keeps_both_moves_and_says_how_it_ended() -> None:
    s = {"t": 0.0, "session": "s"}
    records = [{**s, "kind": "session_start", "game": "tangram", "tags": {}},
               {**s, "kind": "frame_in", "type": "playRequest", "turn": 1, "state": _state(Red=(30, 30))},
               {**s, "kind": "turn_start", "turn": 1},
               # The game sends the next playRequest before the agent finished turn 1.
               {**s, "kind": "frame_in", "type": "playRequest", "turn": 2,
                "state": _state(Red=(30, 30), Green=(80, 80))},
               {**s, "kind": "turn_end", "turn": 1, "outcome": "cancelled", "seconds": 3.0},
               {**s, "kind": "turn_start", "turn": 2}]
    replay = build_replay(records)
    assert [st.anchor for st in replay.steps] == ["start", "human-1", "ai-1", "human-2", "ai-2"]
    assert replay.steps[2].outcome == "cancelled" and replay.steps[3].moved == ["Green"]
    assert replay.steps[4].outcome is None and replay.truncated is not None


def test_each_play_of_a_turn_shows_its_own_feedback_and_the_board_after_it() -> None:
    def state(hits: list[str], **on: tuple[float, float]) -> dict[str, Any]:
        return {"on_board": {n: {"position": list(p), "rotation": 0.0, "collisions": hits if n == "Blue" else []}
                             for n, p in on.items()}, "off_board": {}}

    def play(x: float) -> dict[str, Any]:
        return {"type": "play", "shape": "Blue", "position": [x, 30], "rotation": 0}

    s = {"t": 0.0, "session": "s"}
    records = [{**s, "kind": "session_start", "game": "tangram", "tags": {}},
               {**s, "kind": "frame_in", "type": "playRequest", "turn": 1, "state": state([], Red=(30, 30))},
               {**s, "kind": "turn_start", "turn": 1},
               {**s, "kind": "frame_out", "turn": 1, "frame": play(31)},
               {**s, "kind": "frame_in", "type": "playFeedback", "turn": 1,
                "state": state(["Red"], Red=(30, 30), Blue=(31, 30))},
               {**s, "kind": "frame_out", "turn": 1, "frame": play(60)},
               {**s, "kind": "frame_in", "type": "playFeedback", "turn": 1,
                "state": state([], Red=(30, 30), Blue=(60, 30))},
               {**s, "kind": "turn_end", "turn": 1, "outcome": "played", "seconds": 2.0}]
    replay = build_replay(records)
    view = step_view(replay.steps[2], replay)
    first, second = view["plays"]
    assert first["collisions"] == ["Red"] and second["collisions"] == []
    assert {shape.piece for shape in first["board"].shapes} == {"Red", "Blue"} and second["board"] is None
    page = render_page(replay, source="s.jsonl")
    assert page.count('class="play-board"') == 1 and "reported collisions: Red" in page


def test_the_humans_time_is_from_the_ai_turns_end_to_the_next_request() -> None:
    state: dict[str, Any] = {"on_board": {}, "off_board": {}}
    records = [{"t": 100.0, "session": "s", "kind": "session_start", "game": "tangram", "tags": {}},
               {"t": 104.0, "kind": "frame_in", "type": "playRequest", "turn": 1, "state": state},
               {"t": 104.0, "kind": "turn_start", "turn": 1},
               {"t": 106.5, "kind": "turn_end", "turn": 1, "outcome": "passed", "seconds": 2.5},
               {"t": 113.0, "kind": "frame_in", "type": "playRequest", "turn": 2, "state": state}]
    replay = build_replay(records)
    assert [step_view(s, replay)["human_seconds"] for s in replay.steps] == [None, 4.0, None, 6.5, None]


def test_two_processes_write_the_same_tables_and_pages_as_one(session: Path, tmp_path: Path) -> None:
    src = tmp_path / "t"
    for i in range(12):  # more than one worker's share
        folder = src / f"day{i % 2}"  # the same file name in two folders gets two pages
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"s{i // 2}.jsonl").write_bytes(session.read_bytes())
    outs = {}
    for jobs in ("1", "2"):
        out = tmp_path / f"out{jobs}"
        assert analyze_main([str(src), "--out", str(out), "--jobs", jobs]) == 0
        pages = sorted((out / "replays").glob("*.html"))
        outs[jobs] = ((out / "sessions.csv").read_text(), [(p.name, p.read_text()) for p in pages])
    assert outs["1"] == outs["2"] and len(outs["1"][1]) == 12
