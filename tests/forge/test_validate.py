"""The validator all answers pass through, and the repair of invalid ones."""

from __future__ import annotations

import json

import pytest

from agent.games.forge.decisions import (
    ActionDecision,
    AttackDecision,
    BlockDecision,
    Decision,
    TargetDecision,
    encode,
    safe_decision,
)
from agent.games.forge.fake.catalogue import Table, catalogue
from agent.games.forge.fake.checks import read_answer
from agent.games.forge.models import ForgeRequest, RequestError, parse_request
from agent.games.forge.validate import problems, repair


def _req(name: str, dialect: str = "action") -> tuple[ForgeRequest, dict]:
    body = dict(catalogue(dialect))[name]
    return parse_request(body), body


def test_action_index_in_range_and_pass() -> None:
    request, _ = _req("turn 3: land before spells")
    assert problems(request, ActionDecision(0)) == []
    assert problems(request, ActionDecision(None)) == []
    assert "not offered" in problems(request, ActionDecision(99))[0]
    assert repair(request, ActionDecision(99)) is None
    assert "needs an action decision" in problems(request, TargetDecision((0,)))[0]


def test_possible_actions_without_a_pass_option_cannot_pass() -> None:
    t = Table()
    t.lands(1)
    t.hand("Mountain")
    body = t.actions("possible_actions", options=[{"type": "play_land", "card_id": 5, "card_name": "Mountain"}])
    request = parse_request(body)
    assert problems(request, ActionDecision(None)) == ["passing is not offered in this possible_actions request"]
    assert problems(request, safe_decision(request)) == []


def test_targets_range_duplicates_and_counts() -> None:
    request, _ = _req("target: Forked Bolt, up to two")
    assert problems(request, TargetDecision((2, 3))) == []
    assert any("twice" in p for p in problems(request, TargetDecision((2, 2))))
    assert any("not offered" in p for p in problems(request, TargetDecision((42,))))
    assert any("between 1 and 2" in p for p in problems(request, TargetDecision((0, 1, 2))))
    assert any("between 1 and 2" in p for p in problems(request, TargetDecision(())))
    assert repair(request, TargetDecision((3, 3, 42, 0, 1))) == TargetDecision((3, 0))
    assert repair(request, TargetDecision((42,))) is None
    optional, _ = _req("target: optional (min 0)")
    assert problems(optional, TargetDecision(())) == []


def test_attackers_only_from_the_offer() -> None:
    request, _ = _req("attack: safe attackers only")
    assert problems(request, AttackDecision(((0, 0), (1, 0)))) == []
    assert any("attacker index 7" in p for p in problems(request, AttackDecision(((7, 0),))))
    assert any("defender index 3" in p for p in problems(request, AttackDecision(((0, 3),))))
    assert any("declared twice" in p for p in problems(request, AttackDecision(((0, 0), (0, 0)))))
    assert repair(request, AttackDecision(((0, 0), (0, 0), (7, 0), (1, 3)))) == AttackDecision(((0, 0),))


def test_no_duplicate_blockers() -> None:
    request, _ = _req("block: eat, trade, wall; fliers pass")
    assert problems(request, BlockDecision(((0, 0), (1, 0)))) == []  # two blockers on one attacker is legal
    assert any("blocks twice" in p for p in problems(request, BlockDecision(((0, 0), (0, 1)))))
    assert any("blocker index 9" in p for p in problems(request, BlockDecision(((9, 0),))))
    assert repair(request, BlockDecision(((0, 0), (0, 1), (9, 0), (1, 5)))) == BlockDecision(((0, 0),))


def test_what_the_validator_accepts_forge_accepts_unchanged() -> None:
    """The agent's validator and the fake Forge's reading (separate code) agree on valid answers."""
    samples: dict[str, list[Decision]] = {
        "action": [ActionDecision(None), ActionDecision(0), ActionDecision(1)],
        "target": [TargetDecision((0,)), TargetDecision((0, 1)), TargetDecision(())],
        "declare_attackers": [AttackDecision(()), AttackDecision(((0, 0),)), AttackDecision(((0, 0), (1, 0)))],
        "declare_blockers": [BlockDecision(()), BlockDecision(((0, 0),)), BlockDecision(((0, 0), (1, 0)))],
    }
    for dialect in ("action", "possible_actions"):
        for name, body in catalogue(dialect):
            request = parse_request(body)
            kind = "action" if request.request_type in ("action", "possible_actions") else request.request_type
            for decision in samples[kind]:
                verdict = read_answer(body, 200, json.dumps(encode(request, decision)).encode())
                assert verdict.valid == (not problems(request, decision)), (name, decision, verdict.reason)


def test_safe_decision_is_always_valid() -> None:
    for dialect in ("action", "possible_actions"):
        for name, body in catalogue(dialect):
            request = parse_request(body)
            assert problems(request, safe_decision(request)) == [], name


def test_an_empty_offer_passes_or_is_refused() -> None:
    from agent.games.forge.heuristic import decide

    request = parse_request({"requestType": "action", "actionState": {"actions": []}})
    assert problems(request, ActionDecision(None)) == []
    assert decide(request).decision == ActionDecision(None)
    assert encode(request, ActionDecision(None)) == {"decision": {"type": "pass"}}
    with pytest.raises(RequestError, match="offers no actions"):
        parse_request({"requestType": "possible_actions", "actionState": {"possible_actions": []}})
