"""Every answer the Forge agent sends meets the guard, whatever path made it (issue 51).

Three decided positions: an attack where all-in is lethal and one attacker is not ("all in: 8
damage gets through against 5 life"), a lethal burn (and its target), and blocks needed to
survive. Each goes down every path an answer can take: the model's valid answer, a repaired one
("attacker 0 is declared twice"), one salvaged from a reply cut at max_tokens, the re-ask after a
cut that could not be salvaged, the heuristic's answer after a failed, timed-out or skipped (the
pace's skip) call, and the safe default after an internal error. For the heuristic's paths a weak
heuristic stands in (monkeypatched): its answer must be replaced like the model's, since
``Decider.settle`` is the one place that decides what is sent and the guard is in it.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agent.core.testing.fake_openai import FakeOpenAI, FakeReply
from agent.games.forge import heuristic
from agent.games.forge.decisions import ActionDecision, AttackDecision, BlockDecision, Decision, TargetDecision
from agent.games.forge.factory import make_decider
from agent.games.forge.fake.catalogue import OPP, Table
from agent.games.forge.fake.client import FakeForge
from agent.games.forge.fake.decided import kept
from agent.games.forge.models import ForgeRequest, parse_request
from agent.games.forge.player import Decider, Outcome
from agent.games.forge.view import build_view

from .conftest import Running, forge_config


def all_in_lethal() -> dict[str, Any]:
    t = Table(turn=8, phase="COMBAT_DECLARE_ATTACKERS", opp_life=5)
    t.mine("Serra Angel", "Air Elemental")  # two 4/4 fliers: 8 in the air against 5 life, 4 alone is not
    t.theirs("Hill Giant")
    return t.attack()


def lethal_burn() -> dict[str, Any]:
    t = Table(turn=6, opp_life=3)
    t.lands(1, "Mountain")
    t.hand("Lightning Bolt", "Grizzly Bears")
    return t.actions()


def lethal_target() -> dict[str, Any]:
    t = Table(turn=6, opp_life=3)
    t.theirs("Grizzly Bears")
    return t.target("Lightning Bolt")


def survival_block() -> dict[str, Any]:
    t = Table(turn=9, phase="COMBAT_DECLARE_BLOCKERS", my_turn=False, my_life=5)
    t.mine("Llanowar Elves", "Savannah Lions")
    return t.block(t.theirs("Craw Wurm", "Hill Giant"))  # 9 damage at 5 life


def _index(body: dict[str, Any], key: str, name: str | None) -> int:
    for i, o in enumerate(body["actionState"][key]):
        found = o.get("type") == "pass_priority" if name is None else name in (o.get("name"), o.get("card_name"))
        if found:
            return int(o.get("index", i))
    raise KeyError(name)


POSITIONS: dict[str, Callable[[], dict[str, Any]]] = {
    "all-in lethal": all_in_lethal, "lethal burn": lethal_burn, "lethal target": lethal_target,
    "survival block": survival_block}


def weak(name: str, body: dict[str, Any]) -> Decision:
    """A valid answer that throws the position away."""
    if name == "all-in lethal":
        return AttackDecision(((_index(body, "attackers", "Serra Angel"), 0),))
    if name == "lethal burn":
        return ActionDecision(_index(body, "actions", None))
    if name == "lethal target":
        return TargetDecision((_index(body, "targets", "Grizzly Bears"),))
    return BlockDecision(((_index(body, "blockers", "Savannah Lions"), _index(body, "attackers", "Hill Giant")),))


def reply(name: str, body: dict[str, Any], decision: Decision, duplicate: bool = False) -> dict[str, Any]:
    """The model's JSON for ``decision`` (its first entry twice with ``duplicate``)."""
    if isinstance(decision, ActionDecision):
        return {"reasoning": "wait", "index": decision.index}
    if isinstance(decision, TargetDecision):
        return {"reasoning": "kill it", "indices": list(decision.indices) * (2 if duplicate else 1)}
    if isinstance(decision, AttackDecision):
        pairs = [{"attacker": a, "defender": d} for a, d in decision.pairs]
        return {"reasoning": "one is enough", "attacks": pairs * (2 if duplicate else 1)}
    assert isinstance(decision, BlockDecision)
    pairs = [{"blocker": b, "attacker": a} for b, a in decision.pairs]
    if duplicate:  # the same blocker on a second attacker: "blocker 1 blocks twice"
        pairs.append({"blocker": pairs[0]["blocker"], "attacker": _index(body, "attackers", "Craw Wurm")})
    return {"reasoning": "keep the elves", "blocks": pairs}


def cut_after_the_decision(data: dict[str, Any]) -> str:
    """The reply as a model that wrote its decision first and ran out of tokens in its reasoning."""
    decision = {k: v for k, v in data.items() if k != "reasoning"}
    return json.dumps(decision)[:-1] + ', "reasoning": "because it is the saf'


def cut_inside_the_decision(data: dict[str, Any]) -> str:
    return json.dumps(data)[:-4]


def request_of(body: dict[str, Any]) -> ForgeRequest:
    return parse_request(body)


def thrown_away(body: dict[str, Any], decision: Decision) -> bool:
    """Whether Forge's reading of ``decision`` loses the position (fake/decided.py's check)."""
    if isinstance(decision, ActionDecision):
        return not kept(body, {"index": decision.index})
    if isinstance(decision, TargetDecision):
        return not kept(body, {"indices": list(decision.indices)})
    return not kept(body, {"pairs": list(decision.pairs)})  # type: ignore[union-attr]


def _weak_heuristic(monkeypatch: pytest.MonkeyPatch, name: str, body: dict[str, Any]) -> None:
    def decide(request: ForgeRequest, view: Any = None, tried: Any = ()) -> heuristic.Choice:
        return heuristic.Choice(weak(name, body), "a weak heuristic (test stand-in)")

    monkeypatch.setattr(heuristic, "decide", decide)


async def _decide(decider: Decider, body: dict[str, Any]) -> Outcome:
    request = request_of(body)
    return await decider.decide(request, build_view(request), [], set())


def _decider(tmp_path: Path, fake: FakeOpenAI, **llm: Any) -> Decider:
    config = forge_config(tmp_path, fake, decision={"deadline": 1.0})
    config.llm = config.llm.model_copy(update=llm)
    return make_decider(config)


def test_each_position_is_decided_and_the_weak_answer_throws_it_away() -> None:
    for name, make in POSITIONS.items():
        body = make()
        assert thrown_away(body, weak(name, body)), name
        choice = heuristic.decide(request_of(body))
        assert not thrown_away(body, choice.decision), name
    assert "all in: 8 damage gets through against 5 life" in heuristic.decide(request_of(all_in_lethal())).reason


# ---- the model's paths ---------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(POSITIONS))
async def test_the_models_valid_answer_meets_the_guard(tmp_path: Path, fake_openai: FakeOpenAI, name: str) -> None:
    body = POSITIONS[name]()
    fake_openai.enqueue(FakeReply.ok_json(reply(name, body, weak(name, body))))
    decider = _decider(tmp_path, fake_openai)
    outcome = await _decide(decider, body)
    assert outcome.source == "guard" and not thrown_away(body, outcome.decision)
    assert "replaced the model's choice" in outcome.note


@pytest.mark.parametrize("name", ["all-in lethal", "lethal target", "survival block"])
async def test_a_repaired_answer_meets_the_guard(tmp_path: Path, fake_openai: FakeOpenAI, name: str) -> None:
    """The issue's case: "attacker 0 is declared twice", repaired to one attacker, then sent unguarded."""
    body = POSITIONS[name]()
    fake_openai.enqueue(FakeReply.ok_json(reply(name, body, weak(name, body), duplicate=True)))
    decider = _decider(tmp_path, fake_openai)
    outcome = await _decide(decider, body)
    assert outcome.source == "guard" and not thrown_away(body, outcome.decision)
    assert "invalid LLM answer" in outcome.note and ("twice" in outcome.note or "chosen twice" in outcome.note)


@pytest.mark.parametrize("name", sorted(POSITIONS))
async def test_an_answer_salvaged_from_a_cut_reply_meets_the_guard(tmp_path: Path, fake_openai: FakeOpenAI,
                                                                   name: str) -> None:
    body = POSITIONS[name]()
    text = cut_after_the_decision(reply(name, body, weak(name, body)))
    fake_openai.enqueue(FakeReply(content=text, finish_reason="length"))
    decider = _decider(tmp_path, fake_openai)
    outcome = await _decide(decider, body)
    assert len(fake_openai.chat_requests) == 1  # salvaged, not re-asked
    assert outcome.source == "guard" and not thrown_away(body, outcome.decision)


@pytest.mark.parametrize("name", sorted(POSITIONS))
async def test_the_re_asked_answer_meets_the_guard(tmp_path: Path, fake_openai: FakeOpenAI, name: str) -> None:
    body = POSITIONS[name]()
    data = reply(name, body, weak(name, body))
    fake_openai.enqueue(FakeReply(content=cut_inside_the_decision(data), finish_reason="length"),
                        FakeReply.ok_json(data))
    decider = _decider(tmp_path, fake_openai)
    outcome = await _decide(decider, body)
    assert len(fake_openai.chat_requests) == 2  # the cut answer could not be salvaged: asked once more
    assert outcome.source == "guard" and not thrown_away(body, outcome.decision)


# ---- the heuristic's paths (a weak heuristic stands in) ------------------------------------------


@pytest.mark.parametrize("name", sorted(POSITIONS))
@pytest.mark.parametrize("failure", ["http-500", "not-json", "timeout", "skipped"])
async def test_the_fallback_after_a_failed_call_meets_the_guard(tmp_path: Path, fake_openai: FakeOpenAI,
                                                                monkeypatch: pytest.MonkeyPatch, name: str,
                                                                failure: str) -> None:
    body = POSITIONS[name]()
    _weak_heuristic(monkeypatch, name, body)
    decider = _decider(tmp_path, fake_openai)
    if failure == "http-500":
        fake_openai.enqueue(FakeReply.http_error(500, "overloaded"))
    elif failure == "not-json":
        fake_openai.enqueue(FakeReply(content="I would attack with everything!"))
    elif failure == "timeout":
        fake_openai.enqueue(FakeReply.stall(3.0, json.dumps(reply(name, body, weak(name, body)))))
    else:  # the pace's skip: recent calls took far longer than the deadline leaves
        assert decider.client is not None
        decider.client.endpoint.pace.samples.extend([30.0, 30.0, 30.0])
    outcome = await _decide(decider, body)
    assert outcome.source == "guard" and not thrown_away(body, outcome.decision)
    assert "the heuristic-after-llm answer's choice" in outcome.note
    if failure == "skipped":
        assert outcome.llm_outcome == "skipped" and not fake_openai.chat_requests


@pytest.mark.parametrize("name", sorted(POSITIONS))
async def test_the_heuristic_players_answer_meets_the_guard(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                            name: str) -> None:
    body = POSITIONS[name]()
    _weak_heuristic(monkeypatch, name, body)
    decider = make_decider(forge_config(tmp_path))  # player: heuristic, no LLM
    outcome = await _decide(decider, body)
    assert outcome.source == "guard" and not thrown_away(body, outcome.decision)


@pytest.mark.parametrize("name", sorted(POSITIONS))
async def test_the_safe_default_after_an_internal_error_meets_the_guard(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch,
                                                                        name: str) -> None:
    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("a bug")

    monkeypatch.setattr(heuristic, "decide", broken)
    body = POSITIONS[name]()
    outcome = await _decide(make_decider(forge_config(tmp_path)), body)
    assert outcome.source == "guard" and not thrown_away(body, outcome.decision)
    assert "the safe answer's choice" in outcome.note


@pytest.mark.parametrize("name", sorted(POSITIONS))
async def test_an_invalid_answer_that_reaches_the_last_check_becomes_a_guarded_safe_default(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    body = POSITIONS[name]()

    def invalid(*args: Any, **kwargs: Any) -> heuristic.Choice:
        wrong: Decision = {"all-in lethal": AttackDecision(((9, 9),)), "lethal burn": ActionDecision(99),
                           "lethal target": TargetDecision((42,)), "survival block": BlockDecision(((7, 7),))}[name]
        return heuristic.Choice(wrong, "out of range")

    monkeypatch.setattr(heuristic, "decide", invalid)
    decider = make_decider(forge_config(tmp_path))
    request = request_of(body)
    outcome = decider.settle(request, build_view(request), set(), Outcome(invalid().decision, "x", "heuristic"))
    assert outcome.source == "guard" and not thrown_away(body, outcome.decision)


# ---- through the running agent -------------------------------------------------------------------


def _records(tmp_path: Path) -> list[dict[str, Any]]:
    out = []
    for path in sorted((tmp_path / "transcripts").glob("*.jsonl")):
        out += [json.loads(line) for line in path.read_text().splitlines()]
    return out


async def test_a_session_whose_decider_fails_sends_a_guarded_safe_default(agent_at: Running, fake_openai: FakeOpenAI,
                                                                         tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    async def broken(*args: Any, **kwargs: Any) -> Outcome:
        raise RuntimeError("a bug in the LLM path")

    monkeypatch.setattr(Decider, "_ask_llm", broken)
    body = all_in_lethal()
    async with agent_at(fake_openai) as (_, url), FakeForge(url) as forge:
        exchange = await forge.send(body)
    assert exchange.verdict.valid and kept(body, exchange.verdict.decision)
    records = _records(tmp_path)
    guard = next(r for r in records if r["kind"] == "guard")
    assert guard["rule"] == "lethal-attack" and guard["replaced_source"] == "safe"
    assert next(r for r in records if r["kind"] == "decision")["source"] == "guard"


async def test_the_repaired_attack_of_the_issue_is_guarded_end_to_end(agent_at: Running, fake_openai: FakeOpenAI,
                                                                      tmp_path: Path) -> None:
    body = all_in_lethal()
    fake_openai.enqueue(FakeReply.ok_json(reply("all-in lethal", body, weak("all-in lethal", body), duplicate=True)))
    async with agent_at(fake_openai) as (_, url), FakeForge(url) as forge:
        exchange = await forge.send(body)
    assert exchange.verdict.valid and kept(body, exchange.verdict.decision)
    assert len(exchange.verdict.decision["pairs"]) == 2
    records = _records(tmp_path)
    guard = next(r for r in records if r["kind"] == "guard")
    assert guard["replaced_source"] == "llm-repaired" and guard["model_choice"] == "attacked with Serra Angel"
    decision = next(r for r in records if r["kind"] == "decision")
    assert decision["source"] == "guard" and "attacker 0 is declared twice" in decision["note"]


async def test_guard_off_sends_the_models_answer_but_still_guards_a_fallback(
        tmp_path: Path, fake_openai: FakeOpenAI, monkeypatch: pytest.MonkeyPatch) -> None:
    body = all_in_lethal()
    fake_openai.enqueue(FakeReply.ok_json(reply("all-in lethal", body, weak("all-in lethal", body))),
                        FakeReply.http_error(500))
    decider = _decider(tmp_path, fake_openai, guard="off")
    first = await _decide(decider, body)
    assert first.source == "llm" and thrown_away(body, first.decision)  # off: the raw model, as documented
    _weak_heuristic(monkeypatch, "all-in lethal", body)
    second = await _decide(decider, body)
    assert second.source == "guard" and not thrown_away(body, second.decision)


def test_the_opponent_is_who_the_target_guard_aims_at() -> None:
    body = lethal_target()
    assert _index(body, "targets", OPP) != _index(body, "targets", "Grizzly Bears")
