"""Marked images and checked candidates (issue 24): where the marks land, what the candidates are,
that a named candidate is played exactly, and that each switch turns its part off completely."""

from __future__ import annotations

import base64
import io
import json
from typing import Any

import pytest
from PIL import Image

from agent.core.images import prepare_image
from agent.core.testing.fake_openai import FakeOpenAI, FakeReply, first_enum_responder
from agent.games.tangram.config import Config, TangramImageConfig
from agent.games.tangram.contract import board_of
from agent.games.tangram.geometry.collide import CLEARANCE_PX, inside_board, is_valid, polygon_px
from agent.games.tangram.geometry.frames import Pose, normalize_rotation, rotation_distance, start_pose
from agent.games.tangram.link.server import serve_agent
from agent.games.tangram.llm_player.salvage import salvage_answer
from agent.games.tangram.llm_player.schema import move_schema
from agent.games.tangram.pictures.annotate import LINE_LIGHT, annotate_board, annotate_drawer
from agent.games.tangram.planner.candidates import propose_candidates
from agent.games.tangram.protocol import parse_frame
from agent.games.tangram.replica.crops import render_board, render_drawer
from agent.games.tangram.sim.client import GameClient
from agent.games.tangram.sim.simgame import OBJECTIVES

SIDE = 512


def game_transform(x: float, y: float, size: tuple[int, int]) -> tuple[float, float]:
    """Written out from GAME_FACTS, independently of the agent's code: board units -> world ->
    screen (1920 x 1080) -> the board crop at (880, 115), 562 x 540 -> the picture's size."""
    wx, wy = 523 + 3.37 * x, 394 - 3.22 * y
    sx, sy = (wx - 573) * 1.67 + 960, (wy - 327) * 1.67 + 540
    return (sx - 880) * size[0] / 562, (sy - 115) * size[1] / 540


def prepared(png: bytes, **cfg: Any) -> bytes:
    return prepare_image(base64.b64encode(png).decode(), TangramImageConfig(max_side=SIDE, **cfg)).data


def pixels(data: bytes) -> Image.Image:
    return Image.open(io.BytesIO(data)).convert("RGB")


def brightness(img: Image.Image, x: int, y: int) -> int:
    return sum(img.getpixel((x, y)))


# ---------------------------------------------------------------- the grid


def test_grid_lines_land_within_a_pixel_of_the_games_transform() -> None:
    base = prepared(render_board([]))
    marked = pixels(annotate_board(base, {}, ["grid"]))
    size = marked.size
    assert max(size) == SIDE
    for v in range(10, 100, 10):
        ex, _ = game_transform(v, 0, size)
        _, mid_y = game_transform(0, v + 5, size)  # between two horizontal lines
        columns = range(round(ex) - 4, round(ex) + 5)
        brightest = max(columns, key=lambda c: brightness(marked, c, round(mid_y)))
        assert abs(brightest - ex) <= 1.0, (v, brightest, ex)
        _, ey = game_transform(0, v, size)
        mid_x, _ = game_transform(v + 5, 0, size)
        rows = range(round(ey) - 4, round(ey) + 5)
        brightest_row = max(rows, key=lambda r: brightness(marked, round(mid_x), r))
        assert abs(brightest_row - ey) <= 1.0, (v, brightest_row, ey)


def test_the_grid_is_light_on_the_dark_board_and_the_numbers_are_drawn() -> None:
    base = prepared(render_board([]))
    marked = pixels(annotate_board(base, {}, ["grid"]))
    x, _ = game_transform(50, 0, marked.size)
    _, y = game_transform(0, 55, marked.size)
    assert marked.getpixel((round(x), round(y))) == LINE_LIGHT  # the board under it is near-black
    # Numbers along the bottom edge: white text pixels just above the bottom near x = 50.
    _, bottom = game_transform(50, 0, marked.size)
    box = [(px, py) for px in range(round(x) - 8, round(x) + 9) for py in range(round(bottom) - 14, round(bottom) - 2)]
    assert any(sum(marked.getpixel(p)) > 700 for p in box)


def test_a_grid_line_over_a_light_piece_is_dark() -> None:
    pose = Pose("Cream", 55, 50, 0)  # covers the line x = 50 around y = 50
    base = prepared(render_board([pose]))
    marked = pixels(annotate_board(base, {}, ["grid"]))
    x, _ = game_transform(50, 0, marked.size)
    _, y = game_transform(0, 48, marked.size)
    assert pixels(base).getpixel((round(x) + 3, round(y))) == (250, 193, 147)
    assert marked.getpixel((round(x), round(y))) == (0, 0, 0)


# ---------------------------------------------------------------- labels


def label_centre(img: Image.Image, box: tuple[float, float, float, float]) -> tuple[float, float]:
    """Middle of the label's white text (nothing else on these pieces or the board is that light)."""
    x0, y0, x1, y1 = (round(v) for v in box)
    found = [(x, y) for x in range(max(0, x0), min(img.width, x1)) for y in range(max(0, y0), min(img.height, y1))
             if sum(img.getpixel((x, y))) > 690]
    assert found, "no label text found"
    xs, ys = [p[0] for p in found], [p[1] for p in found]
    return (min(xs) + max(xs)) / 2, (min(ys) + max(ys)) / 2


@pytest.mark.parametrize("pose", [Pose("Red", 30, 70, 0), Pose("Blue", 60, 30, 225), Pose("Brown", 70, 75, 45)])
def test_labels_sit_at_the_pieces_centres(pose: Pose) -> None:
    base = prepared(render_board([pose]))
    marked = pixels(annotate_board(base, {pose.piece: pose}, ["labels"]))
    corners = [game_transform(*p, marked.size) for p in pose.outline_board()]
    cx = sum(c[0] for c in corners) / len(corners)
    cy = sum(c[1] for c in corners) / len(corners)
    xs, ys = [c[0] for c in corners], [c[1] for c in corners]
    tx, ty = label_centre(marked, (min(xs), min(ys), max(xs), max(ys)))
    # The label's middle is the outline's area centroid: for a triangle that is the corners' mean.
    tolerance = 3.0 if len(corners) == 3 else 4.0
    assert abs(tx - cx) <= tolerance and abs(ty - cy) <= tolerance, (tx, ty, cx, cy)


def test_drawer_labels_name_the_pieces_in_the_drawer() -> None:
    drawer = {n: start_pose(n) for n in ("Green", "Purple")}
    base = prepared(render_drawer(drawer.values()))
    marked = pixels(annotate_drawer(base, drawer, ["grid", "labels"]))
    plain = pixels(base)
    assert marked.size == plain.size
    changed = [(x, y) for x in range(0, marked.width, 2) for y in range(0, marked.height, 2)
               if marked.getpixel((x, y)) != plain.getpixel((x, y))]
    assert changed
    assert annotate_drawer(base, drawer, ["grid", "candidates"]) == base  # only labels draw in the drawer


# ---------------------------------------------------------------- candidates


def boards() -> list[tuple[str, dict[str, Pose]]]:
    """Empty boards, half-built figures and a board with a stray piece, for every objective."""
    out: list[tuple[str, dict[str, Pose]]] = []
    for objective in OBJECTIVES:
        board: dict[str, Pose] = {}
        out.append((objective, dict(board)))
        for _ in range(3):
            offer = propose_candidates(objective, board, 1)
            board[offer.candidates[0].piece] = offer.candidates[0].pose
            out.append((objective, dict(board)))
        out.append((objective, {**board, "Brown": Pose("Brown", 12, 12, 0)}))
    return out


@pytest.mark.parametrize("objective, board", boards())
def test_candidates_are_valid_distinct_and_lettered(objective: str, board: dict[str, Pose]) -> None:
    offer = propose_candidates(objective, board, 6)
    assert offer.status == "ok" and offer.candidates
    assert offer.letters == list("ABCDEF"[: len(offer.candidates)])
    assert len({c.piece for c in offer.candidates}) == len(offer.candidates)
    for cand in offer.candidates:
        others = {n: p for n, p in board.items() if n != cand.piece}
        assert is_valid(cand.pose, others, CLEARANCE_PX)
        assert inside_board(polygon_px(cand.pose), CLEARANCE_PX)
        assert cand.part and cand.action in ("place", "move", "clear")


def test_a_finished_figure_offers_no_candidate_and_says_so() -> None:
    board: dict[str, Pose] = {}
    for _ in range(7):
        offer = propose_candidates("A house", board, 3)
        if offer.status != "ok":
            break
        board[offer.candidates[0].piece] = offer.candidates[0].pose
    offer = propose_candidates("A house", board, 3)
    assert offer.status == "complete" and offer.candidates == () and len(board) == 7
    assert propose_candidates("A house", {}, 0).status == "off"


def test_the_candidate_enum_is_built_per_request() -> None:
    with_letters = move_schema(["A", "B"])
    assert list(with_letters["properties"])[:2] == ["reasoning", "candidate"]
    assert with_letters["properties"]["candidate"]["anyOf"][0]["enum"] == ["A", "B"]
    assert "candidate" not in move_schema([])["properties"]


def test_a_named_candidate_wins_over_whatever_else_the_answer_says() -> None:
    named = salvage_answer({"candidate": "b", "action": "fly", "piece": "Pink", "x": "far", "chat": "B!"}, {},
                           ["A", "B"])
    assert named.candidate == "B" and named.move is not None and named.move.chat == "B!" and not named.salvages
    other = salvage_answer({"candidate": "C", "action": "pass"}, {}, ["A", "B"])
    assert other.candidate is None and other.move is not None and other.move.action == "pass"
    assert [s.kind for s in other.salvages] == ["field_dropped"]
    assert "not offered (offered: A, B)" in other.salvages[0].why
    none = salvage_answer({"candidate": None, "action": "pass", "chat": "done"}, {}, ["A"])
    assert none.candidate is None and none.move is not None and none.move.action == "pass" and not none.salvages


# ---------------------------------------------------------------- end to end


def llm_config(base_url: str, tmp_path: Any, candidates: int, annotate: list[str], source: str = "restored") -> Config:
    return Config.model_validate({
        "player": "llm", "turn": {"deadline": 10},
        "llm": {"base_url": base_url, "api_key_required": False, "request_timeout": 5, "candidates": candidates,
                "retry": {"max_attempts": 1}},
        "images": {"annotate": annotate, "source": source}, "transcripts": {"dir": str(tmp_path / "transcripts")}})


def records(server: Any) -> list[dict[str, Any]]:
    return [json.loads(line) for path in server.transcript_paths() for line in path.read_text().splitlines()]


async def test_a_model_naming_candidate_a_plays_it_exactly(tmp_path: Any) -> None:
    async with FakeOpenAI(responder=first_enum_responder) as fake, \
            serve_agent(llm_config(fake.base_url, tmp_path, 3, ["grid", "labels", "candidates"]),
                        host="127.0.0.1", port=0) as server:
        async with GameClient(server.url, objective="A fish", human="random", seed=3) as game:
            for _ in range(3):
                await game.human_turn()
                state = parse_frame(json.dumps({"type": "playRequest", "objective": "A fish",
                                                "state": game.game.state()})).state
                expected = propose_candidates("A fish", board_of(state), 3).candidates[0].pose
                turn = await game.ai_turn(deadline=15)
                assert turn.finished and not turn.undone and len(turn.plays) == 1
                play = turn.plays[0]
                assert (play.shape, round(play.x, 6), round(play.y, 6)) == \
                    (expected.piece, round(expected.x, 6), round(expected.y, 6))
                assert rotation_distance(normalize_rotation(play.rotation), expected.rotation) < 1e-6
                assert play.collisions == []
        request = fake.chat_requests[0].json
        schema = request["response_format"]["json_schema"]["schema"]
        assert schema["properties"]["candidate"]["anyOf"][0]["enum"] == ["A", "B", "C"]
        text = request["messages"][1]["content"][0]["text"]
        assert "Checked candidates" in text and "- A: " in text and "- C: " in text and "thin grid" in text
    decisions = [r for r in records(server) if r["kind"] == "decision"]
    assert [d["candidate"] for d in decisions] == ["A", "A", "A"]
    assert all(d["image_layers"] == ["grid", "labels", "candidates"] for d in decisions[1:])


async def test_with_every_switch_off_the_games_pictures_and_no_mark_text_go_out(tmp_path: Any) -> None:
    move = {"reasoning": "r", "action": "place", "piece": "Red", "rotation": 180, "x": 50, "y": 55,
            "relation": None, "anchor": None, "relation2": None, "anchor2": None, "chat": "Roof."}
    async with FakeOpenAI(responder=lambda req: FakeReply.ok_json(move)) as fake, \
            serve_agent(llm_config(fake.base_url, tmp_path, 0, [], source="game"), host="127.0.0.1", port=0) as server:
        async with GameClient(server.url, objective="A house") as game:
            game.human_move("Cream", 50, 30, 0)
            # The playRequest's pictures carry the human-turn highlight (Cream lit, the rest dimmed).
            sent_board, sent_drawer = (base64.b64decode(i) for i in game.game.images(lit="Cream"))
            turn = await game.ai_turn(deadline=10)
            assert turn.finished
        request = fake.chat_requests[0]
        images = [base64.b64decode(u.partition(",")[2]) for u in request.image_urls()]
        assert images == [prepared(sent_board), prepared(sent_drawer)]  # the game's own, downscaled as always
        body = json.dumps(request.json["messages"])
        for word in ("candidate", "Checked", "grid", "labelled", "marks", "dashed"):
            assert word not in body
        assert "candidate" not in request.json["response_format"]["json_schema"]["schema"]["properties"]
    decisions = [r for r in records(server) if r["kind"] == "decision"]
    assert decisions[0]["candidate"] is None and decisions[0]["image_layers"] == []


async def test_candidates_alone_and_marks_alone(tmp_path: Any) -> None:
    async with FakeOpenAI(responder=first_enum_responder) as fake, \
            serve_agent(llm_config(fake.base_url, tmp_path, 2, ["grid"]), host="127.0.0.1", port=0) as server:
        async with GameClient(server.url, objective="A cat") as game:
            assert (await game.ai_turn(deadline=10)).finished
        text = fake.chat_requests[0].json["messages"][1]["content"][0]["text"]
        assert "thin grid" in text and "dashed outline" not in text and "name written" not in text
        assert "- B: place" in text and "- C:" not in text


async def test_the_simulators_report_shows_each_llm_turns_picture_as_the_model_saw_it(tmp_path: Any) -> None:
    from agent.games.tangram.sim.report import write_report
    from agent.games.tangram.sim.runner import RunOptions, run_in_process, summarize

    async with FakeOpenAI(responder=first_enum_responder) as fake:
        config = llm_config(fake.base_url, tmp_path, 3, ["grid", "labels", "candidates"])
        options = RunOptions(games=1, turns=2, human="random", seed=5, tween=0.0)
        results = await run_in_process(config, options, tmp_path / "agent")
        sent = [base64.b64decode(r.image_urls()[0].partition(",")[2]) for r in fake.chat_requests]
    index = write_report(tmp_path / "report", summarize(results, options, "in-process", transcripts=True), results)
    html = index.read_text()
    shown = [line.split('src="')[1].split('"')[0] for line in html.splitlines()
             if "exactly as the model got it" in line]
    assert len(shown) == 2  # one per AI turn
    assert [(index.parent / name).read_bytes() for name in shown] == sent


def test_a_picture_that_cannot_be_marked_goes_out_as_it_was() -> None:
    from agent.core.memory import Memory
    from agent.games.tangram.contract import TurnView
    from agent.games.tangram.pictures.marks import mark_board, mark_drawer
    from agent.games.tangram.planner.candidates import NO_CANDIDATES
    from agent.games.tangram.protocol import GameState

    view = TurnView(objective="A house", state=GameState(), memory=Memory(2), board_png=b"not a picture",
                    drawer_png=b"nor this")
    cfg = TangramImageConfig(annotate=["grid", "labels", "candidates"])
    assert mark_board(view, cfg, NO_CANDIDATES) == (b"not a picture", ())
    assert mark_drawer(view, cfg) == (b"nor this", ())


def test_layers_are_drawn_in_one_order_whatever_the_config_says() -> None:
    assert TangramImageConfig(annotate=["candidates", "grid", "grid"]).annotate == ["grid", "candidates"]
    with pytest.raises(ValueError):
        TangramImageConfig(annotate=["arrows"])  # type: ignore[list-item]
    with pytest.raises(ValueError):
        Config.model_validate({"llm": {"candidates": 7}})
