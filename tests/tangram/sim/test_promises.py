"""A partner who asks for things, in English and Portuguese, sees each promise kept and each
constraint held over the rest of the game, through the simulator over real sockets."""

from __future__ import annotations

from pathlib import Path

from agent.games.tangram.config import Config
from agent.games.tangram.sim.humans import REQUESTS
from agent.games.tangram.sim.runner import RunOptions, run_in_process


async def test_the_requesting_partner_sees_every_promise_kept(tmp_path: Path) -> None:
    config = Config.model_validate({"player": "planner", "transcripts": {"dir": str(tmp_path / "t")}})
    options = RunOptions(games=4, turns=9, human="requesting", seed=3, tween=0.0, deadline=20, parallel=2,
                         objective="A house")
    games = await run_in_process(config, options, tmp_path / "run")
    asked = [c for g in games for h in g.human_turns for c in h.chats]
    lines = {line for _, pair in REQUESTS for line in pair}
    assert len({c.message for c in asked} & lines) >= 5  # the requests were made, in both languages
    assert any(c.message in {pair[1] for _, pair in REQUESTS} for c in asked)
    assert all(c.reply and "didn't understand" not in c.reply and "não percebi" not in c.reply.lower()
               for c in asked), [(c.message, c.reply) for c in asked]
    portuguese = [c for c in asked if c.message in {pair[1] for _, pair in REQUESTS}]
    # agreed, or nothing is left to play, or the figure is complete
    agreed = ("Está bem", "Boa ideia", "peças", "mexo", "ponho-o", "contigo", "passo a vez", "está completa")
    assert all(any(w in (c.reply or "") for w in agreed) for c in portuguese), \
        [(c.message, c.reply) for c in portuguese if not any(w in (c.reply or "") for w in agreed)]
    taken = [c for c in asked if c.message in {line for what, pair in REQUESTS if what in ("pass_next", "theirs_floor")
                                               for line in pair}]
    handed = ("contigo", "yours", "over to you")
    assert len({c.message for c in taken}) >= 3 and all(any(w in c.reply for w in handed) for c in taken), \
        [(c.message, c.reply) for c in taken]
    for game in games:
        assert game.error is None, game.error
        assert game.broken_promises == [], (game.seed, game.broken_promises)
        assert len(game.turns) == 9
