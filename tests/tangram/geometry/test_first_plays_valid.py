"""Issue 3's 'done when', at test size: arbitrary LLM moves never get a turn undone, and the first
play of a turn is valid in at least 95% of the turns that play."""

from benchmarks.tangram.bench_first_play import measure


async def test_arbitrary_llm_moves_are_valid_on_the_first_play():
    s = await measure(games=3, turns=8, seed=7)
    assert s["ended"] == s["turns"] == 24
    assert s["undone"] == 0 and s["violations"] == 0
    assert s["turns_with_play"] >= 12
    assert s["first_play_valid"] >= 0.95 * s["turns_with_play"]
