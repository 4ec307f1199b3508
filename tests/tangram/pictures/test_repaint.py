"""What the model sees is the board as it is (issue 49, item 3): the simulator's dimmed playRequest
pictures and falsely tinted feedback pictures come out of the agent's image preparation with every
piece in its own colour, and no tint where the state says ``collisions: []``."""

from __future__ import annotations

import base64
import io

import numpy as np
import pytest
from PIL import Image

from agent.core.images import prepare_image
from agent.games.tangram.config import TangramImageConfig
from agent.games.tangram.pictures import look
from agent.games.tangram.pictures.repaint import prepare_picture, redraw, redrawn_image, repainter
from agent.games.tangram.protocol import parse_frame as _parse
from agent.games.tangram.replica.crops import board_image, drawer_image
from agent.games.tangram.sim.simgame import SimGame, frame_text


def parse_frame(frame: dict[str, object]):  # type: ignore[no-untyped-def]
    return _parse(frame_text(frame))


FULL = TangramImageConfig(max_side=1024)  # no shrinking: pixels compared one for one


def _game_after_human_move() -> tuple[SimGame, dict[str, object]]:
    game = SimGame()
    game.place("Red", 30, 40, 0)
    game.place("Cream", 70, 40, 90)
    assert game.human_move("Blue", 50, 80, 0)
    return game, game.start_ai_turn()


def _prepared(frame: dict[str, object], key: str, source: str, cfg: TangramImageConfig = FULL) -> Image.Image:
    """The picture as the session prepares it (:class:`~agent.games.tangram.link.views.Views`' two jobs)."""
    parsed = parse_frame(frame)
    b64 = str(frame[f"{key}_img"])
    got = prepare_picture(b64, parsed.state, key, cfg.model_copy(update={"source": source}))  # type: ignore[arg-type]
    return Image.open(io.BytesIO(got.data)).convert("RGB")


def _true(game: SimGame, key: str) -> Image.Image:
    poses = list(game.current_poses().values())
    return board_image(poses) if key == "board" else drawer_image(poses)


def _false_colours() -> list[tuple[int, int, int]]:
    out = []
    for name, colour in look.PIECE_COLORS.items():
        out.append(look.dimmed(colour))
        if name != "Blue":  # tinted Blue is the board's own near-black: nothing to see, nothing to undo
            out.append(look.tinted(colour, look.BOARD_TEXTURE.median))
    return out


def _count_near(img: Image.Image, colours: list[tuple[int, int, int]], tolerance: int) -> int:
    px = np.asarray(img).astype(int)
    return int(sum((((px - c) ** 2).sum(axis=2) <= tolerance ** 2).sum() for c in colours))


@pytest.mark.parametrize("key", ["board", "drawer"])
def test_a_dimmed_play_request_picture_is_restored_to_the_true_colours(key: str) -> None:
    game, frame = _game_after_human_move()
    sent = Image.open(io.BytesIO(base64.b64decode(str(frame[f"{key}_img"])))).convert("RGB")
    true = np.asarray(_true(game, key)).astype(int)
    assert (np.abs(np.asarray(sent).astype(int) - true).max(axis=2) > 3).mean() > 0.01  # the game's is dimmed
    restored = np.asarray(_prepared(frame, key, "restored")).astype(int)
    wrong = np.abs(restored - true).max(axis=2) > 3
    assert wrong.mean() < 0.002, f"{wrong.sum()} pixels off"
    assert _count_near(Image.fromarray(restored.astype(np.uint8)), [look.dimmed(c) for c in look.PIECE_COLORS.values()],
                       2) == 0


def test_a_falsely_tinted_feedback_picture_shows_no_tint_once_restored() -> None:
    game = SimGame(false_tint=True)
    game.place("Red", 30, 50, 0)
    game.start_ai_turn()
    game.handle_agent_frame('{"type":"play","shape":"Green","position":[55,50],"rotation":0}')
    play = game.current_turn.plays[-1] if game.current_turn else None
    frame = game.play_feedback_frame(play)
    assert all(p["collisions"] == [] for p in frame["state"]["on_board"].values())
    sent = Image.open(io.BytesIO(base64.b64decode(frame["board_img"]))).convert("RGB")
    tints = [look.tinted(look.PIECE_COLORS[n], look.BOARD_TEXTURE.median) for n in ("Red", "Green")]
    assert _count_near(sent, tints, 12) > 500  # the game's picture shows both pieces tinted
    restored = _prepared(frame, "board", "restored")
    assert _count_near(restored, tints, 12) == 0
    true = np.asarray(_true(game, "board")).astype(int)
    assert (np.abs(np.asarray(restored).astype(int) - true).max(axis=2) > 3).mean() < 0.002


def test_redrawn_is_the_state_in_the_games_look_and_game_is_the_picture_untouched() -> None:
    game, frame = _game_after_human_move()
    redrawn = np.asarray(_prepared(frame, "board", "redrawn")).astype(int)
    true = np.asarray(_true(game, "board")).astype(int)
    assert (np.abs(redrawn - true).max(axis=2) > 3).mean() < 0.002
    untouched = _prepared(frame, "board", "game")
    sent = Image.open(io.BytesIO(base64.b64decode(str(frame["board_img"])))).convert("RGB")
    assert np.array_equal(np.asarray(untouched), np.asarray(sent))
    assert repainter("game", parse_frame(frame).state, "board") is None


def test_a_restored_picture_that_is_shrunk_keeps_the_true_colours_inside_the_pieces() -> None:
    game, frame = _game_after_human_move()
    parsed = parse_frame(frame)
    cfg = TangramImageConfig(max_side=448, source="restored")
    got = prepare_image(str(frame["board_img"]), cfg, repaint=repainter("restored", parsed.state, "board"))
    img = Image.open(io.BytesIO(got.data)).convert("RGB")
    assert max(img.size) == 448
    assert _count_near(img, [look.PIECE_COLORS["Red"], look.PIECE_COLORS["Cream"]], 2) > 1000
    assert _count_near(img, [look.dimmed(look.PIECE_COLORS["Cream"])], 2) == 0


def test_a_broken_repair_leaves_the_games_picture(monkeypatch: pytest.MonkeyPatch) -> None:
    from agent.games.tangram.pictures import repaint

    def boom(*_: object, **__: object) -> None:
        raise RuntimeError("bug")

    monkeypatch.setattr(repaint, "restore", boom)
    _, frame = _game_after_human_move()
    apply = repainter("restored", parse_frame(frame).state, "board")
    assert apply is not None
    assert apply(Image.new("RGB", (562, 540))) is None


def test_redraw_puts_the_drawer_pieces_at_their_start_places() -> None:
    game = SimGame()
    state = parse_frame(game.play_request_frame()).state
    assert np.array_equal(np.asarray(redraw(state, "drawer", (210, 210))), np.asarray(_true(game, "drawer")))


def test_the_default_source_is_redrawn() -> None:
    assert TangramImageConfig().source == "redrawn"
    with pytest.raises(ValueError):
        TangramImageConfig(source="painted")  # type: ignore[arg-type]


async def test_the_model_gets_the_play_requests_pieces_in_their_own_colours(tmp_path: object) -> None:
    """End to end: the simulator's playRequest after a human move is dimmed; the pictures in the
    LLM request are not (board and drawer), and with images.source: game they are."""
    from pathlib import Path

    from agent.core.testing.fake_openai import FakeOpenAI, FakeReply
    from agent.games.tangram.config import Config
    from agent.games.tangram.link.server import serve_agent
    from agent.games.tangram.sim.client import GameClient

    move = {"reasoning": "r", "action": "place", "piece": "Red", "rotation": 180, "x": 50, "y": 55,
            "relation": None, "anchor": None, "relation2": None, "anchor2": None, "chat": "Roof."}
    dimmed = [look.dimmed(c) for c in look.PIECE_COLORS.values()]
    for source, want_dimmed in (("redrawn", False), ("restored", False), ("game", True)):
        config = Config.model_validate({
            "player": "llm", "turn": {"deadline": 15},
            "llm": {"base_url": "http://127.0.0.1:9", "api_key_required": False, "request_timeout": 5,
                    "retry": {"max_attempts": 1}},
            "images": {"source": source, "max_side": 1024},
            "transcripts": {"dir": str(Path(str(tmp_path)) / source)}})
        async with FakeOpenAI(responder=lambda req: FakeReply.ok_json(move)) as fake:
            config = config.model_copy(update={"llm": config.llm.model_copy(update={"base_url": fake.base_url})})
            async with serve_agent(config, host="127.0.0.1", port=0) as server, \
                    GameClient(server.url, objective="A house") as game:
                game.game.place("Purple", 80, 80, 0)  # on the board before this turn: dimmed with the drawer
                game.human_move("Cream", 50, 30, 0)
                assert (await game.ai_turn(deadline=15)).finished
            urls = fake.chat_requests[0].image_urls()
        assert len(urls) == 2
        for url in urls:
            img = Image.open(io.BytesIO(base64.b64decode(url.partition(",")[2]))).convert("RGB")
            assert (_count_near(img, dimmed, 2) > 200) == want_dimmed, source


def test_a_larger_window_s_picture_is_restored_too() -> None:
    """A bigger game window sends a bigger picture of the same region: the pieces are found at scale."""
    from agent.games.tangram.pictures.repaint import restore, state_outlines

    game, frame = _game_after_human_move()
    sent = Image.open(io.BytesIO(base64.b64decode(str(frame["board_img"])))).convert("RGB")
    big = sent.resize((sent.width * 2, sent.height * 2), Image.Resampling.NEAREST)
    state = parse_frame(frame).state
    fixed = restore(big, state_outlines(state, "board", big.size), "board")
    true = np.asarray(_true(game, "board").resize(big.size, Image.Resampling.NEAREST)).astype(int)
    assert (np.abs(np.asarray(fixed).astype(int) - true).max(axis=2) > 3).mean() < 0.004
    assert _count_near(fixed, [look.dimmed(c) for c in look.PIECE_COLORS.values()], 2) == 0


@pytest.mark.parametrize("key", ["board", "drawer"])
def test_redrawn_at_the_models_size_shows_what_restored_and_shrunk_shows(key: str) -> None:
    """The default's reason: the model gets the same board (the real captures' figures are in
    bench_look), drawn at its size straight away instead of decoded, repaired and shrunk."""
    _, frame = _game_after_human_move()
    cfg = TangramImageConfig()  # max_side 512: the 562 x 540 board is shrunk
    redrawn = np.asarray(_prepared(frame, key, "redrawn", cfg)).astype(int)
    restored = np.asarray(_prepared(frame, key, "restored", cfg)).astype(int)
    assert redrawn.shape == restored.shape
    if key == "board":
        assert redrawn.shape[:2] == (492, 512)
    apart = np.sqrt(((redrawn - restored) ** 2).sum(axis=2))
    assert (apart <= 16).mean() > 0.98  # piece edges: crisp at 512 px against shrunk from 562
    assert _count_near(Image.fromarray(redrawn.astype(np.uint8)),
                       [look.dimmed(c) for c in look.PIECE_COLORS.values()], 2) == 0


def test_redrawn_reads_only_the_pictures_header() -> None:
    """A picture whose pixels are broken still gives the model the board (drawn from the state);
    one that is not a PNG, or is too large by its header, is refused as prepare_image refuses it."""
    from agent.core.images import ImageError

    _, frame = _game_after_human_move()
    state = parse_frame(frame).state
    raw = base64.b64decode(str(frame["board_img"]))
    torn = base64.b64encode(raw[:64] + b"\x00" * 500).decode()
    got = redrawn_image(torn, state, "board", TangramImageConfig())
    assert (got.width, got.height) == (512, 492) and got.original_size == (562, 540)
    assert Image.open(io.BytesIO(got.data)).size == (512, 492)
    pixels = redrawn_image(torn, state, "board", TangramImageConfig(), encode=False)
    assert pixels.data == b"" and pixels.pixels is not None and pixels.pixels.size == (512, 492)
    jpeg = redrawn_image(torn, state, "board", TangramImageConfig(format="jpeg"))
    assert jpeg.mime == "image/jpeg" and jpeg.data[:2] == b"\xff\xd8"
    with pytest.raises(ImageError, match="not a PNG"):
        redrawn_image(base64.b64encode(b"GIF89a" + b"\x00" * 60).decode(), state, "board", TangramImageConfig())
    with pytest.raises(ImageError, match="too large"):
        redrawn_image(str(frame["board_img"]), state, "board", TangramImageConfig(max_pixels=100_000))


def test_the_panels_drawn_ahead_serve_the_first_redrawn_pictures() -> None:
    from agent.games.tangram.pictures import paint
    from agent.games.tangram.pictures.repaint import warm_panels

    cfg = TangramImageConfig(max_side=300)  # sizes no other test draws
    warm_panels(cfg)
    _, frame = _game_after_human_move()
    state = parse_frame(frame).state
    misses = paint._panel.cache_info().misses
    for key in ("board", "drawer"):
        redrawn_image(str(frame[f"{key}_img"]), state, key, cfg)  # type: ignore[arg-type]
    assert paint._panel.cache_info().misses == misses
