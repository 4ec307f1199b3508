"""The real-game runner's ``--chat set`` mode, its pure parts (no browser, no network): reading a reply
set, the human's pieces for an item, the reply to a chat line told apart from a turn's narration
(from the agent's transcript records and the event log), who moved each piece, the sheet's rows in
bench_replies' words, the objective told from its label, and the arguments."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml

from agent.games.tangram.geometry.frames import Pose
from agent.games.tangram.offline.agent import OfflineAgent
from agent.games.tangram.planner import load_library
from agent.games.tangram.planner.library import FigureLibrary
from benchmarks.tangram.bench_replies import describe
from benchmarks.tangram.real_game.args import ArgumentError, build_parser, options_from
from benchmarks.tangram.real_game.browser import KEPT_CHAT, socket_hook
from benchmarks.tangram.real_game.chat_set import (
    SetError,
    SetItem,
    choose,
    file_name,
    human_order,
    parse_set,
    read_set,
    rounds_before,
)
from benchmarks.tangram.real_game.console import PUT_BACK_LINE
from benchmarks.tangram.real_game.drawn import SeenObjectives, kept_objective
from benchmarks.tangram.real_game.events import Event
from benchmarks.tangram.real_game.human import ASCII_RUNS
from benchmarks.tangram.real_game.replies import (
    Heard,
    answer_to,
    chat_request,
    find_reply,
    last_said,
    page_ms,
    transcript_records,
)
from benchmarks.tangram.real_game.sheet import (
    ItemRun,
    board_lines,
    item_line,
    movers_at,
    set_lines,
    set_summary,
    sheet_row,
    under_way,
)

SHEET_KEYS = ["id", "lang", "objective", "stage", "moving", "before", "board", "agent_last_said", "move_under_way",
              "say", "reply", "right_when", "ms"]
"""bench_replies.play_set's row, in its order."""
ALL = ("Red", "Cream", "Blue", "Green", "Yellow", "Purple", "Brown")


def item(**over: Any) -> dict[str, Any]:
    base = {"id": "x1", "lang": "en", "objective": "A cat", "stage": "early", "say": "is that the head?",
            "right_when": "it says whether it is"}
    return {**base, **over}


@pytest.fixture(scope="module")
def library() -> FigureLibrary:
    return load_library()


# ---- reading a set ----------------------------------------------------------------------------------


def test_a_set_is_read_with_its_optional_keys(tmp_path: Path) -> None:
    path = tmp_path / "set.yaml"
    path.write_text(yaml.safe_dump([
        item(),
        item(id="x2", lang="pt", objective="A fish", stage="done", partner=["Brown"], moving=True,
             before=["olá", "vamos?"], say="Não mexas na cauda!"),
    ], allow_unicode=True), encoding="utf-8")
    first, second = read_set(path)
    assert first == SetItem(id="x1", lang="en", objective="A cat", stage="early", say="is that the head?",
                            right_when="it says whether it is")
    assert second.partner == ("Brown",) and second.moving and second.before == ("olá", "vamos?")
    assert second.say == "Não mexas na cauda!"


@pytest.mark.parametrize(("entry", "message"), [
    (item(lang="fr"), "lang 'fr' is not one of en, pt"),
    (item(objective="A dog"), "objective 'A dog' is not one the game draws"),
    (item(stage="late"), "stage 'late' is not one of start, early, mid, done"),
    (item(partner=["Pink"]), "partner names no piece: Pink"),
    (item(moving="yes"), "'moving' must be true or false"),
    (item(before="hello"), "'before' must be a list of texts"),
    (item(say=""), "'say' must be a non-empty text"),
    ({k: v for k, v in item().items() if k != "right_when"}, "'right_when' must be a non-empty text"),
])
def test_a_bad_item_is_named_with_what_is_wrong(entry: dict[str, Any], message: str) -> None:
    with pytest.raises(SetError, match="item 1 \\(x1\\)") as caught:
        parse_set([entry])
    assert message in str(caught.value)


def test_a_set_must_be_a_list_with_distinct_ids(tmp_path: Path) -> None:
    with pytest.raises(SetError, match="non-empty YAML list"):
        parse_set({"id": "x1"})
    with pytest.raises(SetError, match="id 'x1' is used twice"):
        parse_set([item(), item()])
    (tmp_path / "bad.yaml").write_text("- [unclosed\n", encoding="utf-8")
    with pytest.raises(SetError, match=r"bad\.yaml"):
        read_set(tmp_path / "bad.yaml")


def test_items_are_chosen_by_id_in_file_order() -> None:
    items = parse_set([item(id="a"), item(id="b"), item(id="c")])
    assert [i.id for i in choose(items, None)] == ["a", "b", "c"]
    assert [i.id for i in choose(items, ["c", " a"])] == ["a", "c"]
    with pytest.raises(SetError, match="no item zz"):
        choose(items, ["a", "zz"])


def test_the_stage_says_how_many_rounds_come_before_the_line() -> None:
    rounds = {stage: rounds_before(parse_set([item(stage=stage)])[0]) for stage in ("start", "early", "mid", "done")}
    assert rounds == {"start": 0, "early": 1, "mid": 2, "done": 10}


def test_file_names_keep_only_safe_characters() -> None:
    assert file_name("p1-en start/ã") == "p1-en_start__"


# ---- the human's pieces ------------------------------------------------------------------------------


def test_the_partner_pieces_come_first_while_still_in_the_drawer() -> None:
    assert human_order(("Red", "Purple")) == ["Red", "Purple", "Green", "Yellow", "Blue", "Brown", "Cream"]
    assert human_order(("Red", "Purple"), drawer=["Purple", "Green", "Cream"]) == ["Purple", "Green", "Cream"]
    assert human_order((), drawer=[]) == []


def test_a_line_is_cut_into_what_playwright_types_and_what_is_typed_key_by_key() -> None:
    assert ASCII_RUNS.findall("Não, à cauda!") == ["N", "ã", "o, ", "à", " cauda!"]
    assert "".join(ASCII_RUNS.findall("ótimo ção")) == "ótimo ção"


# ---- the reply to a chat line ---------------------------------------------------------------------------


def rec(kind: str, session: str = "s1", **data: Any) -> dict[str, Any]:
    return {"t": 0.0, "session": session, "kind": kind, **data}


def chat_in(message: str, request: int, session: str = "s1") -> dict[str, Any]:
    return rec("frame_in", session, type="chatRequest", message=message, request=request)


def chat_out(message: str, session: str = "s1", **scope: Any) -> dict[str, Any]:
    return rec("frame_out", session, frame={"type": "chat", "message": message}, **scope)


def ev(t: float, src: str, kind: str = "", ws: int = 1, text: str = "", **msg: Any) -> Event:
    return Event(t, src, kind, msg=msg, ws=ws if src in ("game", "agent") else 0, text=text)  # type: ignore[arg-type]


LINE = "what are you doing with that piece?"
NARRATION = "I placed Blue as the left wall."
REPLY = "I'm placing Blue as the left wall."


def moving_turn() -> tuple[list[Event], list[dict[str, Any]]]:
    """A line sent as the AI's turn starts: the turn's narration reaches the page before the reply."""
    events = [ev(1.0, "agent", "chat", message="I placed Red as the roof."),
              ev(2.0, "game", "playRequest", state={}),
              ev(2.2, "game", "chatRequest", message=LINE, objective="A house"),
              ev(2.5, "agent", "chat", message=NARRATION),
              ev(2.51, "console", text=NARRATION),
              ev(2.6, "agent", "play", shape="Blue"),
              ev(2.9, "agent", "chat", message=REPLY),
              ev(3.05, "console", text=REPLY)]
    records = [rec("frame_in", type="playRequest", turn=1), chat_out(NARRATION, turn=1), chat_in(LINE, 1),
               chat_out(REPLY, request=1), rec("chat_reply", reply=REPLY, outcome="answered", request=1)]
    return events, records


def test_the_reply_is_the_line_sent_under_the_lines_request_not_the_turns_narration() -> None:
    events, records = moving_turn()
    request = chat_request(events, 0, 1, LINE)
    assert request == 2
    answer, heard = find_reply(events, records, LINE, request, 1, set())
    assert answer is not None and answer.key == ("s1", 1) and answer.outcome == "answered"
    assert heard == Heard(request=2, reply=6, shown=7, text=REPLY)
    assert heard.ms(events) == 850.0
    assert last_said(events, request, 1) == "I placed Red as the roof."


def test_no_reply_while_the_transcript_has_not_recorded_it_and_none_twice_for_one_request() -> None:
    events, records = moving_turn()
    assert find_reply(events, records[:3], LINE, 2, 1, set()) == (answer_to(records[:3], LINE, set()), None)
    assert answer_to(records[:3], LINE, set()) is not None and answer_to(records[:3], LINE, set()).text is None
    assert answer_to(records, LINE, {("s1", 1)}) is None  # taken by an earlier line
    assert find_reply(events[:6], records, LINE, 2, 1, set())[1] is None  # the frame has not reached the page


def test_the_same_line_said_twice_is_matched_to_its_own_request_in_order() -> None:
    records = [chat_in("ok", 1), chat_out("first", request=1), chat_in("ok", 2), chat_out("second", request=2),
               chat_in("ok", 1, session="s2"), chat_out("third", session="s2", request=1)]
    taken: set[tuple[str, int]] = set()
    said = []
    for _ in range(3):
        answer = answer_to(records, "ok", taken)
        assert answer is not None
        taken.add(answer.key)
        said.append(answer.text)
    assert said == ["first", "second", "third"]


def test_a_request_answered_with_no_line_is_told_by_its_outcome() -> None:
    records = [chat_in("hm", 3), rec("chat_reply", reply=None, outcome="empty", request=3)]
    answer = answer_to(records, "hm", set())
    assert answer is not None and answer.text is None and answer.outcome == "empty"


def test_transcripts_are_read_from_every_file_skipping_a_line_being_written(tmp_path: Path) -> None:
    (tmp_path / "a.jsonl").write_text(json.dumps(chat_in("hi", 1)) + "\n", encoding="utf-8")
    (tmp_path / "b.jsonl").write_text(json.dumps(chat_out("hello", request=1)) + '\n{"t": 1, "kin', encoding="utf-8")
    assert [r["kind"] for r in transcript_records(tmp_path)] == ["frame_in", "frame_out"]
    assert transcript_records(tmp_path / "none") == []


def test_the_reply_is_timed_on_the_pages_clock_from_the_send_click_to_its_print() -> None:
    marks = [[100.0, "mouseup", ""], [900.0, "mouseup", ""], [1300.0, "print", "Getting game state"],
             [1350.0, "chatRequest", LINE], [1360.0, "print", "User: " + LINE], [1800.0, "print", NARRATION],
             [2100.5, "print", REPLY]]
    assert page_ms(marks, LINE, REPLY) == 1200.5
    assert page_ms(marks[2:], LINE, REPLY) == 750.5  # no click seen: from the frame leaving the page
    assert page_ms(marks[:-1], LINE, REPLY) is None and page_ms(marks, "other", REPLY) is None
    assert page_ms([["bad"], *marks], LINE, REPLY) == 1200.5


def test_a_reply_not_printed_is_timed_to_its_frame() -> None:
    events, _ = moving_turn()
    assert Heard(request=2, reply=6, shown=None, text=REPLY).ms(events) == 700.0


# ---- who moved each piece -------------------------------------------------------------------------------


def drag(shape: str, overlaps: list[str] | None = None) -> Event:
    return Event(0.0, "human", "drag", msg={"shape": shape, "overlaps": [] if overlaps is None else overlaps})


def socket(ws: int) -> Event:
    return Event(0.0, "runner", "socket", msg={"ws": ws})


def test_movers_are_the_humans_accepted_drags_and_the_agents_plays_on_the_socket() -> None:
    events = [socket(1), drag("Green"), socket(2), drag("Yellow"), drag("Purple", ["Yellow"]),
              ev(0, "game", "playRequest", ws=2), ev(0, "agent", "play", ws=2, shape="Red"),
              ev(0, "agent", "finish", ws=2), drag("Purple"), ev(0, "game", "playRequest", ws=2),
              ev(0, "agent", "play", ws=2, shape="Yellow")]
    assert movers_at(events, len(events), 2) == {"Yellow": "agent", "Red": "agent", "Purple": "partner"}
    assert movers_at(events, len(events), 1) == {"Green": "partner"}
    assert movers_at(events, 4, 2) == {"Yellow": "partner"}


def test_a_play_the_game_undid_leaves_the_piece_to_who_moved_it_before() -> None:
    events = [socket(1), drag("Green"), ev(0, "game", "playRequest"), ev(0, "agent", "play", shape="Green"),
              ev(0, "agent", "play", shape="Red"), ev(0, "agent", "finish"), ev(0, "console", text=PUT_BACK_LINE)]
    assert movers_at(events, 5, 1) == {"Green": "partner", "Red": "agent"}  # a second piece puts the first back
    assert movers_at(events, len(events), 1) == {"Green": "partner"}  # the apology: the last one went back too


# ---- the sheet's rows --------------------------------------------------------------------------------------


def in_place(library: FigureLibrary, objective: str, *pieces: str) -> tuple[dict[str, Pose], dict[str, Any]]:
    """Poses of ``pieces`` where the planner's figure has them, and the game state reporting them."""
    planner = OfflineAgent(library)
    planner.sync(objective, {}, {})
    targets = planner.fit({}, commit=False).targets
    board = {p: targets[p] for p in pieces}
    state = {"on_board": {p: {"position": {"position": "({}, {})".format(*pose.marker_board()), "vertices": []},
                              "rotation": pose.rotation, "collisions": []} for p, pose in board.items()},
             "off_board": {p: {"rotation": 0.0} for p in ALL if p not in board}}
    return board, state


def test_the_board_is_described_in_bench_replies_words(library: FigureLibrary) -> None:
    board, state = in_place(library, "A house", "Red", "Green")
    movers = {"Red": "agent", "Green": "partner"}
    lines = board_lines("A house", state, movers, library)
    planner = OfflineAgent(library)
    planner.sync("A house", board, movers)
    assert lines == describe(planner, board, movers)
    figure = planner.figure
    slot_of = planner.fit(board, commit=False).slot_of
    assert lines[0] == f"Green: moved by the participant; {figure.parts[slot_of['Green']]}"
    assert lines[1] == f"Red: moved by the agent; {figure.parts[slot_of['Red']]}"
    assert lines[-1] == "in the drawer: Blue, Brown, Cream, Purple, Yellow"
    assert board_lines("A house", {"on_board": {}, "off_board": {}}, {}, library) == [
        "in the drawer: Blue, Brown, Cream, Green, Purple, Red, Yellow"]


def test_the_move_under_way_is_the_turns_first_play_as_bench_replies_words_it(library: FigureLibrary) -> None:
    board, state = in_place(library, "A cat", "Red")
    _, empty = in_place(library, "A cat")
    pose = board["Red"]
    play = ev(3.0, "agent", "play", shape="Red", position=[pose.x, pose.y], rotation=pose.rotation)
    events = [ev(1.0, "game", "playRequest", state=empty), ev(1.1, "game", "chatRequest", message=LINE, state=empty),
              play, ev(5.0, "game", "playFeedback", state=state), ev(5.1, "agent", "finish")]
    planner = OfflineAgent(library)
    planner.sync("A cat", board, {})
    part = planner.figure.parts[planner.fit(board, commit=False).slot_of["Red"]]
    assert under_way("A cat", events, 0, 1, 1, library) == (
        f"Red: the agent is placing it from the drawer as the {part}; the move has not landed yet")
    landed = [*events[:1], play, events[3], ev(5.05, "game", "chatRequest", message=LINE, state=state), events[4]]
    assert under_way("A cat", landed, 0, 3, 1, library).endswith("the move had landed")
    assert under_way("A cat", [events[0], events[1], events[4]], 0, 1, 1, library) == ""


def test_a_row_has_the_simulators_keys_and_says_when_another_objective_was_played() -> None:
    entry = parse_set([item(before=["hi"])])[0]
    row = sheet_row(entry, objective="A cat", board=["in the drawer: none"], last_said="Hi!", move_under_way="",
                    reply="Yes.", ms=512.0)
    assert list(row) == SHEET_KEYS
    assert row["before"] == ["hi"] and row["reply"] == "Yes." and row["moving"] is False
    drawn = sheet_row(entry, objective="A fish", board=[], last_said="", move_under_way="", reply=None, ms=None,
                      failure="waited 60 s for the agent's reply")
    assert list(drawn) == [*SHEET_KEYS, "objective_drawn", "objective_wanted", "failure"]
    assert drawn["objective"] == "A fish" and drawn["objective_wanted"] == "A cat" and drawn["reply"] is None


def test_the_summary_counts_replies_mismatches_and_languages() -> None:
    en, pt, failed = parse_set([item(id="a"), item(id="b", lang="pt"), item(id="c")])
    runs = [ItemRun(en, sheet_row(en, objective="A cat", board=[], last_said="", move_under_way="", reply="Yes.",
                                  ms=10.0), loads=3, asked=2, seconds=100.0),
            ItemRun(pt, sheet_row(pt, objective="A fish", board=[], last_said="", move_under_way="",
                                  reply="Sim.", ms=20.0), loads=20, seconds=300.0),
            ItemRun(failed, sheet_row(failed, objective="A cat", board=[], last_said="", move_under_way="",
                                      reply=None, ms=None, failure="timed out"), loads=1, seconds=50.0)]

    def lang(text: str) -> str:
        return "pt" if text == "Sim." else "en"

    summary = set_summary(runs, lang)
    assert summary["items"] == 3 and summary["replies"] == 2 and summary["objective_mismatches"] == 1
    assert summary["replies_in_language"] == 2 and summary["failures"] == {"c": "timed out"}
    assert summary["loads"] == 24 and summary["objectives_asked"] == 2
    assert summary["item_s"] == {"median": 100.0, "max": 300.0, "total": 450.0}
    lines = set_lines(runs, summary, lang, "/x/sheet.jsonl")
    assert "(DRAWN)" in lines[1] and "NO REPLY: timed out" in lines[2] and "'Yes.'" in lines[0]
    assert lines[-2].startswith("chat set: 3 items, 2 replies received, 1 played on another objective")
    assert item_line(runs[0], lang).startswith("a            en A cat")


# ---- the objective drawn ---------------------------------------------------------------------------------------


def test_an_objective_is_recognised_by_its_labels_picture_once_seen() -> None:
    rng = np.random.default_rng(7)
    house, fish = (rng.integers(0, 255, (40, 260)).astype(np.float32) for _ in range(2))
    seen = SeenObjectives()
    assert seen.recognise(house) is None
    seen.learn("A house", house)
    seen.learn("A fish", fish)
    assert seen.recognise(house.copy()) == "A house" and seen.recognise(fish + 1.0) == "A fish"
    assert seen.recognise(np.zeros((40, 260), np.float32)) is None
    assert seen.recognise(np.zeros((10, 10), np.float32)) is None
    assert seen.distances(house)[0] == (0.0, "A house")


def test_the_objective_is_read_from_the_hooks_line_for_a_chat_it_kept() -> None:
    assert kept_objective(KEPT_CHAT + '{"objective":"A robot","message":"?"}') == "A robot"
    assert kept_objective(KEPT_CHAT + "not json") is None
    assert kept_objective("[runner] websocket open ws://localhost:5000") is None
    assert "__runnerKeepChat" in socket_hook(None) and KEPT_CHAT.strip() in socket_hook(None)
    assert "__runnerMarks = marks" not in socket_hook(None) and "__runnerMarks = marks" in socket_hook(None, clock=True)


# ---- the arguments ---------------------------------------------------------------------------------------------


def _args(tmp_path: Path, *extra: str) -> list[str]:
    (tmp_path / "gaips").mkdir(exist_ok=True)
    (tmp_path / "template").mkdir(exist_ok=True)
    return ["--gaips", str(tmp_path / "gaips"), "--template", str(tmp_path / "template"), *extra]


def test_a_set_run_takes_a_set_and_optional_items(tmp_path: Path) -> None:
    path = tmp_path / "set.yaml"
    path.write_text(yaml.safe_dump([item(id="a"), item(id="b"), item(id="c")]), encoding="utf-8")
    options = options_from(build_parser().parse_args(_args(tmp_path, "--chat", "set", "--set", str(path))))
    assert options.chat == "set" and [i.id for i in options.set_items] == ["a", "b", "c"]
    options = options_from(build_parser().parse_args(
        _args(tmp_path, "--chat", "set", "--set", str(path), "--items", "c,a")))
    assert [i.id for i in options.set_items] == ["a", "c"]
    assert options_from(build_parser().parse_args(_args(tmp_path))).set_items == ()


@pytest.mark.parametrize(("extra", "message"), [
    (["--chat", "set"], "--chat set needs --set FILE"),
    (["--set", "x.yaml"], "--set and --items go with --chat set"),
    (["--chat", "set", "--set", "/nonexistent/set.yaml"], "--set /nonexistent/set.yaml: no such file"),
    (["--chat", "set", "--set", "SET", "--items", "zz"], "--items: no item zz in the set"),
    (["--chat", "set", "--set", "SET", "--games", "2"], "--chat set plays its items one game each"),
])
def test_bad_set_arguments_get_one_clear_line(tmp_path: Path, extra: list[str], message: str) -> None:
    path = tmp_path / "set.yaml"
    path.write_text(yaml.safe_dump([item()]), encoding="utf-8")
    with pytest.raises(ArgumentError) as caught:
        options_from(build_parser().parse_args(_args(tmp_path, *[str(path) if e == "SET" else e for e in extra])))
    assert str(caught.value).startswith(message)
