"""The real-game runner's pure parts: the turn tally from a recorded frame log, the summary object,
the console's error count, the recorded frames and the arguments. The runner itself needs the GAIPS
sources and a browser, so CI never runs it (docs/tangram-real-game.md)."""

from __future__ import annotations

import base64
import json
import socket
from pathlib import Path
from typing import Any

import pytest
import yaml

from benchmarks.tangram.real_game.__main__ import main
from benchmarks.tangram.real_game.agent_run import agent_config, port_in_use
from benchmarks.tangram.real_game.args import ArgumentError, build_parser, options_from
from benchmarks.tangram.real_game.console import count_errors, count_warnings, error_lines, overlaps
from benchmarks.tangram.real_game.events import Event, EventLog, ImageStore, frame_event, read_events
from benchmarks.tangram.real_game.plan import plan
from benchmarks.tangram.real_game.report import summarize, table
from benchmarks.tangram.real_game.screen import END_TURN, FINISH, drop_spot, world_to_screen
from benchmarks.tangram.real_game.tally import tally

PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"x" * 100).decode()


def state(**on_board: tuple[float, float]) -> dict[str, Any]:
    return {"on_board": {name: {"position": {"position": f"({x}, {y})", "vertices": []}, "rotation": 0.0,
                                "collisions": []} for name, (x, y) in on_board.items()},
            "off_board": {}}


def game(t: float, kind: str, ws: int = 1, **extra: Any) -> Event:
    msg = {"type": kind, "objective": "A cat", "state": extra.pop("state", state()), **extra}
    return Event(t, "game", kind, msg=msg, ws=ws)


def agent(t: float, kind: str, ws: int = 1, **msg: Any) -> Event:
    return Event(t, "agent", kind, msg={"type": kind, **msg}, ws=ws)


def console(t: float, text: str) -> Event:
    return Event(t, "console", "log", text=text)


# ---- the turn tally ------------------------------------------------------------------------------


def test_a_clean_turn_is_one_finished_row_with_its_feedback_latency() -> None:
    rows = tally([game(1.0, "playRequest"), agent(2.0, "play", shape="Red", position=[50.0, 50.0], rotation=0.0),
                  game(5.5, "playFeedback", state=state(Red=(50.0, 50.0))), agent(6.0, "finish")]).rows
    assert len(rows) == 1
    row = rows[0]
    assert (row.ended, row.plays, row.objective, row.seconds) == ("finish", 1, "A cat", 5.0)
    assert row.latencies == [3.5]
    assert not row.finish_while_landing and not row.put_back


def test_a_finish_sent_before_the_feedback_is_a_finish_while_landing() -> None:
    rows = tally([game(1.0, "playRequest"), agent(2.0, "play", shape="Red"), agent(2.5, "finish"),
                  game(4.0, "playFeedback", state=state(Red=(50.0, 50.0)))]).rows
    assert rows[0].finish_while_landing
    assert rows[0].latencies == [2.0]  # the late feedback still counts for its play


def test_a_finish_after_every_feedback_is_not_landing() -> None:
    rows = tally([game(1.0, "playRequest"), agent(2.0, "play", shape="Red"),
                  game(3.0, "playFeedback", state=state(Red=(50.0, 50.0))), agent(3.5, "play", shape="Red"),
                  game(5.0, "playFeedback", state=state(Red=(52.0, 50.0))), agent(5.1, "finish")]).rows
    assert not rows[0].finish_while_landing
    assert rows[0].latencies == [1.0, 1.5]


def test_the_games_apology_marks_the_turn_put_back() -> None:
    rows = tally([game(1.0, "playRequest"), agent(2.0, "play", shape="Red"),
                  game(3.0, "playFeedback", state=state(Red=(50.0, 50.0))), agent(3.5, "finish"),
                  console(3.6, "Sorry I had some trouble playing, I'll retry next round")]).rows
    assert rows[0].put_back and rows[0].put_back_by == "chat"


def test_a_piece_missing_from_the_next_state_was_put_back() -> None:
    events = [game(1.0, "playRequest"), agent(2.0, "play", shape="Red"),
              game(3.0, "playFeedback", state=state(Red=(50.0, 50.0))), agent(3.5, "finish"),
              game(9.0, "playRequest", state=state(Green=(10.0, 10.0)))]
    rows = tally(events).rows
    assert rows[0].put_back and rows[0].put_back_by == "state"
    assert not rows[1].put_back


def test_a_piece_still_in_place_or_moved_by_the_human_is_not_put_back() -> None:
    kept = [game(1.0, "playRequest"), agent(2.0, "play", shape="Red"),
            game(3.0, "playFeedback", state=state(Red=(50.0, 50.0))), agent(3.5, "finish"),
            game(9.0, "playRequest", state=state(Red=(50.2, 50.0), Green=(10.0, 10.0)))]
    assert not tally(kept).rows[0].put_back
    moved = [*kept[:4], Event(5.0, "human", "drag", msg={"shape": "Red"}),
             game(9.0, "playRequest", state=state(Red=(80.0, 80.0)))]
    assert not tally(moved).rows[0].put_back


def test_chats_during_a_turn_and_replies_to_the_human() -> None:
    events = [game(0.5, "chatRequest", message="hi"), agent(0.9, "chat", message="Hello!"),
              game(1.0, "playRequest"), game(1.5, "chatRequest", message="top please"),
              agent(2.0, "chat", message="Sure."), agent(2.1, "chat", message="Placing Red."),
              agent(2.2, "play", shape="Red"), game(3.0, "playFeedback", state=state(Red=(50.0, 90.0))),
              agent(3.1, "finish")]
    result = tally(events)
    row = result.rows[0]
    assert (row.chats, row.chat_requests, row.replies) == (2, 1, 1)
    assert (result.chat_requests_between, result.replies_between) == (1, 1)
    summary = summarize(result, events)
    assert (summary.chats, summary.chat_requests, summary.replies) == (3, 2, 2)


def test_an_unanswered_chat_is_not_a_reply() -> None:
    result = tally([game(1.0, "playRequest"), game(1.5, "chatRequest", message="?"), agent(3.0, "finish")])
    assert (result.rows[0].chat_requests, result.rows[0].replies) == (1, 0)


def test_a_reload_cuts_the_turn_and_the_new_socket_starts_afresh() -> None:
    events = [game(1.0, "playRequest"), agent(2.0, "play", shape="Red"),
              Event(2.5, "human", "reload"), agent(3.0, "finish"),  # the old socket is gone: not this turn
              game(10.0, "playRequest", ws=2, objective="A fish"), agent(11.0, "finish", ws=2)]
    result = tally(events)
    assert [r.ended for r in result.rows] == ["reload", "finish"]
    assert [r.game for r in result.rows] == [1, 2]
    assert result.rows[1].objective == "A fish"
    summary = summarize(result, events)
    assert (summary.turns, summary.finished, summary.interrupted, summary.games) == (2, 1, 1, 2)


def test_a_turn_never_ended_stays_open_and_an_error_is_not_a_finish() -> None:
    events = [game(1.0, "playRequest"), agent(2.0, "error", message="x"), game(5.0, "playRequest")]
    result = tally(events)
    assert [r.ended for r in result.rows] == ["error", "open"]
    summary = summarize(result, events)
    assert (summary.finished, summary.errors_sent, summary.unfinished) == (0, 1, 1)


def test_the_summary_has_the_documented_keys_and_is_json() -> None:
    events = [game(1.0, "playRequest"), agent(2.0, "play", shape="Red"),
              game(4.0, "playFeedback", state=state(Red=(50.0, 50.0))), agent(4.5, "finish"),
              console(5.0, "SCRIPT ERROR: Invalid call. Nonexistent function 'x'.\n   at: f (res://a.gd:3)")]
    data = json.loads(json.dumps(summarize(tally(events), events).model_dump()))
    for key in ("turns", "finished", "finish_while_landing", "put_back", "gdscript_errors", "chats", "replies"):
        assert key in data
    assert (data["turns"], data["finished"], data["gdscript_errors"]) == (1, 1, 1)
    assert data["play_feedback_s"] == {"n": 1, "median": 2.0, "max": 2.0}
    assert data["objectives"] == ["A cat"]


def test_the_table_has_a_header_and_one_line_per_turn() -> None:
    result = tally([game(1.0, "playRequest"), agent(2.0, "finish"), game(3.0, "playRequest"), agent(4.0, "finish")])
    lines = table(result)
    assert len(lines) == 3 and lines[0].split()[0] == "turn"
    assert "A cat" in lines[1] and "finish" in lines[2]


# ---- the console -------------------------------------------------------------------------------


def test_console_errors_are_counted_once_each_and_warnings_apart() -> None:
    lines = ["Godot Engine v4.6.stable.official - https://godotengine.org",
             "SCRIPT ERROR: Invalid access to property or key 'x'.\n   at: _process (res://Main_scene.gd:80)",
             "ERROR: Attempt to call a method on a null instance.",
             "USER ERROR: oops", "Parse Error: Unexpected token", "Uncaught RuntimeError: unreachable",
             "WARNING: a texture is missing", "moving Red this turn",
             "Sorry I had some trouble playing, I'll retry next round", "[runner] websocket open ws://x",
             "[]", "An error occured while I was playing: x"]
    assert count_errors(lines) == 5
    assert count_warnings(lines) == 1
    assert error_lines(lines, limit=2) == ["SCRIPT ERROR: Invalid access to property or key 'x'.",
                                           "ERROR: Attempt to call a method on a null instance."]


@pytest.mark.parametrize(("line", "names"), [("[]", []), ('["Red", "BOUNDARY"]', ["Red", "BOUNDARY"]),
                                             ('[&"Cream"]', ["Cream"]), ("[Red]", ["Red"]),
                                             ("[1, 2, 3] of something", None), ("moving Red this turn", None),
                                             ("[a b]", None)])
def test_the_games_printed_overlap_lists_are_read(line: str, names: list[str] | None) -> None:
    assert overlaps(line) == names


# ---- the recorded frames -----------------------------------------------------------------------


def test_a_frames_pictures_go_to_files_within_the_budget_then_are_dropped(tmp_path: Path) -> None:
    frame = json.dumps({"type": "playRequest", "objective": "A cat", "board_img": PNG, "drawer_img": PNG,
                        "state": {}})
    store = ImageStore(tmp_path / "images", budget=150)
    event = frame_event(1.0, "game", frame, 1, store)
    assert event.type == "playRequest" and "board_img" not in event.msg and "drawer_img" not in event.msg
    assert event.images["board_img"].startswith("images/") and event.images["drawer_img"] == "dropped"
    assert (tmp_path / event.images["board_img"]).read_bytes().startswith(b"\x89PNG")
    assert event.size == len(frame)
    assert frame_event(2.0, "game", frame, 1, ImageStore(None, 10**9)).images == {
        "board_img": "dropped", "drawer_img": "dropped"}


def test_a_frame_that_is_not_a_json_object_is_kept_as_cut_text() -> None:
    event = frame_event(1.0, "agent", "x" * 5000, 1, ImageStore(None, 0))
    assert event.type == "" and len(event.text) == 2000 and event.size == 5000
    assert frame_event(1.0, "agent", b"[1]", 1, ImageStore(None, 0)).text == "[1]"


def test_the_event_log_reads_back_what_it_wrote(tmp_path: Path) -> None:
    log = EventLog(tmp_path / "events.jsonl")
    log.add(agent(1.0, "play", shape="Red"))
    log.add(console(2.0, "[]"))
    log.close()
    again = read_events(tmp_path / "events.jsonl")
    assert again == log.events


# ---- the canvas and the plan -------------------------------------------------------------------


def test_the_cameras_centre_is_the_screens_centre_and_buttons_sit_right_of_the_board() -> None:
    assert world_to_screen(573, 327) == (960, 540)
    end_x, end_y = END_TURN.center()
    finish_x, finish_y = FINISH.center()
    assert end_y == pytest.approx(finish_y) and finish_x > end_x
    assert 0 < end_x < 1920 and 0 < end_y < 1080


def test_drop_spots_put_the_roomiest_first() -> None:
    spots = drop_spot({"Red": (15.0, 15.0)}, [(15.0, 15.0), (85.0, 85.0), (50.0, 50.0)])
    assert spots == [(85.0, 85.0), (50.0, 50.0), (15.0, 15.0)]


def test_the_plan_reloads_on_the_third_of_four_turns_and_never_for_fewer() -> None:
    assert [t.reload for t in plan(4)] == [False, False, True, False]
    assert not any(t.reload for t in plan(3))
    assert not any(t.reload for t in plan(5, reload_turn=0))
    assert plan(2)[0].chat_before and plan(2)[1].undo and plan(2)[1].chat_during


# ---- arguments and the port --------------------------------------------------------------------


def _args(tmp_path: Path, *extra: str) -> list[str]:
    (tmp_path / "gaips").mkdir(exist_ok=True)
    (tmp_path / "template").mkdir(exist_ok=True)
    return ["--gaips", str(tmp_path / "gaips"), "--template", str(tmp_path / "template"), *extra]


@pytest.mark.parametrize(("extra", "message"), [
    (["--turns", "0"], "--turns 0: must be 1 to 40"),
    (["--games", "99"], "--games 99: must be 1 to 20"),
    (["--turns", "2", "--reload-turn", "3"], "--reload-turn 3: must be 0 (never) to --turns (2)"),
    (["--config", "/nonexistent/x.yaml"], "--config /nonexistent/x.yaml: no such file"),
    (["--step-timeout", "0"], "--step-timeout 0.0: must be positive"),
    (["--images-mb", "-1"], "--images-mb -1.0: must be 0 or more"),
    (["--chromium", "/nonexistent/chromium"], "--chromium /nonexistent/chromium: no such file"),
])
def test_bad_arguments_get_one_clear_line(tmp_path: Path, extra: list[str], message: str) -> None:
    with pytest.raises(ArgumentError) as caught:
        options_from(build_parser().parse_args(_args(tmp_path, *extra)))
    assert str(caught.value).startswith(message)


def test_missing_folders_are_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--gaips", str(tmp_path / "none"), "--template", str(tmp_path)]) == 2
    assert capsys.readouterr().err.strip() == (f"error: --gaips {tmp_path / 'none'}: no such folder "
                                               "(a GAIPS/TangramCollaborativeAI clone or mirror)")
    assert main(["--gaips", str(tmp_path), "--template", str(tmp_path / "none")]) == 2
    assert "--template" in capsys.readouterr().err


def test_good_arguments_make_options(tmp_path: Path) -> None:
    options = options_from(build_parser().parse_args(_args(tmp_path, "--local-model", "--turns", "3")))
    assert options.local_model and options.turns == 3 and options.turn_timeout == 900.0
    assert options.out.parent == Path("/tmp/realgame/runs")


def test_config_and_fake_llm_exclude_each_other(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        build_parser().parse_args(_args(tmp_path, "--fake-llm", "--config", "x.yaml"))
    assert "not allowed with" in capsys.readouterr().err


def test_a_taken_port_is_reported_with_its_address() -> None:
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        port = held.getsockname()[1]
        assert port_in_use(port) is not None and f"127.0.0.1:{port}" in str(port_in_use(port))
    assert port_in_use(port) is None


def test_the_agents_config_keeps_the_users_and_sends_transcripts_to_the_run(tmp_path: Path) -> None:
    config = agent_config({"player": "llm", "llm": {"model": "m", "temperature": 0.2},
                           "transcripts": {"dir": "elsewhere", "images": True}}, tmp_path / "t", "http://x/v1")
    assert config["transcripts"] == {"dir": str(tmp_path / "t"), "images": True, "enabled": True}
    assert config["server"]["port"] == 5000
    assert config["llm"] == {"model": "m", "temperature": 0.2, "base_url": "http://x/v1", "api_key_required": False}
    assert "base_url" not in agent_config({}, tmp_path).get("llm", {})


def test_the_page_hook_redirects_the_games_socket_only_when_asked() -> None:
    from benchmarks.tangram.real_game.browser import socket_hook

    assert "const redirect = null;" in socket_hook(None)
    assert 'const redirect = ["ws://localhost:5000", "ws://localhost:5071"];' in socket_hook(5071)
    assert "[runner] websocket open" in socket_hook(None)


def test_the_agent_port_must_be_an_unprivileged_port(tmp_path: Path) -> None:
    with pytest.raises(ArgumentError, match="--agent-port 80: must be 1024 to 65535"):
        options_from(build_parser().parse_args(_args(tmp_path, "--agent-port", "80")))
    assert options_from(build_parser().parse_args(_args(tmp_path, "--agent-port", "5071"))).agent_port == 5071
    assert agent_config({}, tmp_path, port=5071)["server"]["port"] == 5071


def test_decisions_are_counted_by_source_from_transcript_lines() -> None:
    from benchmarks.tangram.real_game.report import decision_sources

    lines = [json.dumps({"kind": "decision", "source": "llm"}), json.dumps({"kind": "decision", "source": "llm"}),
             json.dumps({"kind": "decision", "source": "planner-fallback"}),
             json.dumps({"kind": "llm", "note": "decision"}), "not json but says decision", ""]
    assert decision_sources(lines) == {"llm": 2, "planner-fallback": 1}


# ---- --study ------------------------------------------------------------------------------------


def test_a_study_run_takes_a_study_file_and_a_participant(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    study = tmp_path / "s.yaml"
    study.write_text("name: s\n")
    options = options_from(build_parser().parse_args(_args(tmp_path, "--study", str(study), "--participant", "P07")))
    assert options.study == study and options.participant == "P07" and not options.games_given
    options = options_from(build_parser().parse_args(_args(tmp_path, "--study", str(study), "--games", "2")))
    assert options.games == 2 and options.games_given
    with pytest.raises(ArgumentError, match="--participant goes with --study"):
        options_from(build_parser().parse_args(_args(tmp_path, "--participant", "P07")))
    with pytest.raises(ArgumentError, match="no such file"):
        options_from(build_parser().parse_args(_args(tmp_path, "--study", str(tmp_path / "none.yaml"))))
    with pytest.raises(SystemExit):
        build_parser().parse_args(_args(tmp_path, "--study", str(study), "--config", "x.yaml"))
    assert "not allowed with" in capsys.readouterr().err


def test_the_study_copy_has_its_own_database_and_finds_its_configs(tmp_path: Path) -> None:
    from benchmarks.tangram.real_game.agent_run import RunnerError
    from benchmarks.tangram.real_game.study import study_copy

    (tmp_path / "base.yaml").write_text("player: planner\n")
    study = tmp_path / "s.yaml"
    study.write_text("name: s\ndesign: within\nstore: real.db\nconditions:\n  a: {config: base.yaml}\n"
                     "  b: {config: offline}\n")
    out = tmp_path / "run"
    out.mkdir()
    copied = yaml.safe_load(study_copy(study, out).read_text())
    assert copied["store"] == "study.db"  # never the study's own database
    assert copied["conditions"]["a"]["config"] == str((tmp_path / "base.yaml").resolve())
    assert copied["conditions"]["b"]["config"] == "offline"  # a shipped config, by name
    study.write_text("- not a study\n")
    with pytest.raises(RunnerError, match="not a study file"):
        study_copy(study, out)


# ---- the online check with questionnaires (online.py --questionnaires: answering.py, exported.py) -------------


def test_the_online_check_serves_the_example_questionnaires_with_offline_partners(tmp_path: Path) -> None:
    from agent.games import read_study
    from benchmarks.tangram.real_game.online import EXAMPLE, questionnaire_study

    (tmp_path / "planner.yaml").write_text("player: planner\n")
    (tmp_path / "study.yaml").write_text(questionnaire_study(), encoding="utf-8")
    study = read_study(tmp_path / "study.yaml")
    example = yaml.safe_load(EXAMPLE.read_text(encoding="utf-8"))
    data = yaml.safe_load((tmp_path / "study.yaml").read_text(encoding="utf-8"))
    assert len(data["conditions"]) == len(example["conditions"]) == 3  # the final page names three partners
    for key in ("questionnaires", "flow", "languages", "attention"):
        assert data[key] == example[key]
    assert not {"completion_url", "screen_out_url"} & set(data["online"])
    assert data["online"]["screen_out_code"] == example["online"]["screen_out_code"]
    assert study.questionnaires is not None and set(study.questionnaires.specs) == set(example["questionnaires"])


def test_a_scripted_participant_passes_or_fails_the_attention_check_and_moves_sliders() -> None:
    import random

    from benchmarks.tangram.real_game.answering import SLIDER_START, TEXTS, ItemView, choose, seed

    check = ItemView("check", "single", ("square", "triangle", "circle"))
    assert choose(check, random.Random(1), "en", "triangle") == ("triangle", None)
    assert choose(check, random.Random(1), "en", "triangle", fail_check=True) == ("square", None)
    likert = ItemView("helped", "likert", tuple(str(p) for p in range(1, 8)))
    assert choose(likert, random.Random(1), "en", 4, fail_check=True)[0] == 1
    sliders = {choose(ItemView("effort", "slider"), random.Random(n), "en")[0] for n in range(200)}
    assert SLIDER_START not in sliders and sliders <= set(range(101))  # an unmoved slider is no answer
    many = ItemView("games", "multiple", ("a", "b", "other"))
    for n in range(20):
        value, other = choose(many, random.Random(n), "pt")
        assert value == [o for o in many.options if o in value] and (other is not None) == ("other" in value)
    assert choose(ItemView("why", "long_text"), random.Random(1), "pt")[0] == TEXTS["pt"]
    assert seed("L0001", "partner", 1).random() == seed("L0001", "partner", 1).random()


def _entry(**kw: Any) -> Any:
    from benchmarks.tangram.real_game.answering import Entry

    base = {"participant": "L0001", "questionnaire": "partner", "game_position": 1, "item": "helped", "value": 4,
            "other": None, "language": "en"}
    return Entry(**{**base, **kw})


def _row(**kw: str) -> dict[str, str]:
    base = {"participant": "L0001", "questionnaire": "partner", "game_position": "1", "item": "helped",
            "value": "4", "other": "", "language": "en"}
    return {**base, **kw}


def test_the_export_is_compared_answer_by_answer_with_what_the_browsers_entered() -> None:
    from benchmarks.tangram.real_game.exported import compare

    entries = [_entry(), _entry(questionnaire="about_you", game_position=None, item="games", value=["a", "other"],
                                other="<i>chess</i>", language="pt")]
    rows = [_row(), _row(questionnaire="about_you", game_position="", item="games", value="a;other",
                         other="<i>chess</i>", language="pt"), _row(participant="L0009", item="x")]
    same = compare(entries, rows)
    assert (same.entered, same.exported, same.equal, same.problems) == (2, 2, 2, [])
    changed = compare(entries, [_row(value="5"), rows[1]])
    assert changed.equal == 1 and "entered ('4', '', 'en'), exported ('5', '', 'en')" in changed.problems[0]
    assert compare(entries, [rows[0]]).problems == ["entered but not exported: ('L0001', 'about_you', '', 'games')"]
    assert "exported but not entered" in compare(entries[:1], rows[:2]).problems[0]
    assert "exported ('4', '', 'pt')" in compare(entries[:1], [_row(language="pt")]).problems[0]


def test_the_verdict_needs_every_code_state_language_reload_and_a_valid_package() -> None:
    from benchmarks.tangram.real_game.answering import Answered, Persona
    from benchmarks.tangram.real_game.exported import Comparison, verdict

    people = (Persona("L0001"), Persona("L0002", language="pt"), Persona("L0003", fail_checks=True,
                                                                           reload_page="partner"))
    answered = {"L0001": Answered([_entry()], 0, 1), "L0002": Answered([_entry(participant="L0002", language="pt")],
                                                                       0, 1),
                "L0003": Answered([_entry(participant="L0003")], 1, 1)}
    results = [{"participant": "L0001", "games_played": 3, "completion_code": "C0DE", "failure": None},
               {"participant": "L0002", "games_played": 3, "completion_code": "C0DE", "failure": None},
               {"participant": "L0003", "games_played": 2, "completion_code": "SCR33N", "failure": None}]
    states = {"L0001": ("completed", None), "L0002": ("completed", None), "L0003": ("dropped", "screened_out")}
    good = Comparison(3, 3, 3)
    lines, ok = verdict(people, results, answered, states, good, "valid", "C0DE", "SCR33N")
    assert ok and lines[-2].startswith("answers: 3 entered, 3 exported, 3 equal")
    assert not verdict(people, results, answered, states, good, "INVALID: x", "C0DE", "SCR33N")[1]
    assert not verdict(people, results, answered, states, Comparison(3, 3, 2, ["x"]), "valid", "C0DE", "SCR33N")[1]
    screened_with_code = [*results[:2], {**results[2], "completion_code": "C0DE"}]
    lines, ok = verdict(people, screened_with_code, answered, states, good, "valid", "C0DE", "SCR33N")
    assert not ok and "saw code 'C0DE', not 'SCR33N'" in lines[2]
    no_reload = {**answered, "L0003": Answered([_entry(participant="L0003")], 0, 1)}
    assert not verdict(people, results, no_reload, states, good, "valid", "C0DE", "SCR33N")[1]
