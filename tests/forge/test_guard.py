"""The guard (docs/forge.md, "The guard"): each rule on a board built from real cards, the
positions it leaves alone, the legal-choice schemas, and ``llm.guard`` through the running agent."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agent.core.testing.fake_openai import FakeOpenAI, FakeReply
from agent.games.forge.decisions import ActionDecision, AttackDecision, BlockDecision, Decision, TargetDecision
from agent.games.forge.fake.catalogue import OPP, Table, catalogue
from agent.games.forge.fake.client import FakeForge
from agent.games.forge.guard import Override, review
from agent.games.forge.heuristic import action_key
from agent.games.forge.models import ForgeRequest, parse_request
from agent.games.forge.prompt_context import has_choice, schema_for
from agent.games.forge.view import build_view

from .conftest import Running

CATALOGUE = dict(catalogue())


def guard(body: dict[str, Any], decision: Decision, tried: tuple[str, ...] = ()) -> Override | None:
    request = parse_request(body)
    return review(request, build_view(request), decision, tried)


def index_of(body: dict[str, Any], key: str, name: str | None) -> int:
    """The index of the option named ``name`` (None: the pass option)."""
    def named(o: dict[str, Any]) -> bool:
        if name is None:
            return o.get("type") == "pass_priority"
        return name in (o.get("name"), o.get("card_name"), o.get("card"))
    return next(o.get("index", i) for i, o in enumerate(body["actionState"][key]) if named(o))


# ---- G1: lethal attack -----------------------------------------------------------------------------


def lethal_attack() -> dict[str, Any]:
    return CATALOGUE["attack: lethal through one blocker"]  # 7 power, one 0/4 wall, 4 life


def test_g1_no_attack_when_lethal_is_proven_becomes_the_all_in_attack() -> None:
    override = guard(lethal_attack(), AttackDecision(()))
    assert override is not None and override.rule == "lethal-attack"
    assert isinstance(override.decision, AttackDecision) and len(override.decision.pairs) == 3
    assert "4 damage gets through against 4 life" in override.reason


def test_g1_an_attack_that_is_not_sure_to_be_lethal_is_replaced() -> None:
    body = lethal_attack()
    bears, guide = index_of(body, "attackers", "Grizzly Bears"), index_of(body, "attackers", "Goblin Guide")
    # Bears and Goblin Guide: the wall stops one of them, 2 of 4 get through.
    override = guard(body, AttackDecision(((bears, 0), (guide, 0))))
    assert override is not None and len(override.decision.pairs) == 3  # type: ignore[union-attr]


def test_g1_a_lethal_attack_of_the_models_own_is_kept() -> None:
    body = lethal_attack()
    assert guard(body, AttackDecision(((0, 0), (1, 0), (2, 0)))) is None


def test_g1_leaves_an_attack_alone_when_lethal_is_not_proven() -> None:
    body = CATALOGUE["attack: safe attackers only"]  # opponent at 20
    assert guard(body, AttackDecision(())) is None
    t = Table(turn=8, phase="COMBAT_DECLARE_ATTACKERS", opp_life=5)
    t.mine("Grizzly Bears", "Centaur Courser")
    t.theirs("Wall of Omens")  # 5 power, the wall stops the Courser: 2 of 5
    assert guard(t.attack(), AttackDecision(())) is None


# ---- G2: lethal burn, and never passing holding it ---------------------------------------------------


def test_g2_passing_with_lethal_burn_offered_casts_it() -> None:
    body = CATALOGUE["main 1: burn for lethal"]  # opponent at 3, Lightning Bolt, a Mountain
    bolt = index_of(body, "actions", "Lightning Bolt")
    override = guard(body, ActionDecision(None))
    assert override is not None and override.rule == "lethal-burn"
    assert override.decision == ActionDecision(bolt) and "the model passed" in override.reason
    passing = index_of(body, "actions", None)
    assert guard(body, ActionDecision(passing)) is not None


def test_g2_casting_the_lethal_burn_is_kept_and_nothing_else_is_forced() -> None:
    body = CATALOGUE["main 1: burn for lethal"]
    assert guard(body, ActionDecision(index_of(body, "actions", "Lightning Bolt"))) is None
    t = Table(turn=6, opp_life=4)  # Bolt is not lethal at 4: passing is the model's business
    t.lands(1, "Mountain")
    t.hand("Lightning Bolt")
    assert guard(t.actions(), ActionDecision(None)) is None


def test_g2_a_burn_that_already_came_back_this_turn_is_not_forced_again() -> None:
    body = CATALOGUE["main 1: burn for lethal"]
    request = parse_request(body)
    view = build_view(request)
    bolt = next(o for o in request.options.options if o.card_name == "Lightning Bolt")  # type: ignore[union-attr]
    assert review(request, view, ActionDecision(None), {action_key(view, bolt)}) is None


def test_g2_works_in_the_possible_actions_dialect_and_for_a_pinging_ability() -> None:
    t = Table(turn=6, opp_life=3)
    t.lands(1, "Mountain")
    t.hand("Lightning Bolt")
    body = t.actions("possible_actions")
    override = guard(body, ActionDecision(index_of(body, "possible_actions", None)))
    assert override is not None and override.decision == ActionDecision(index_of(body, "possible_actions",
                                                                                  "Lightning Bolt"))
    t = Table(turn=6, my_turn=False, phase="END_OF_TURN", opp_life=1)
    t.mine("Prodigal Sorcerer")
    body = t.actions()
    override = guard(body, ActionDecision(None))
    assert override is not None and override.decision == ActionDecision(index_of(body, "actions", "Prodigal Sorcerer"))


# ---- G3: the lethal burn's target ------------------------------------------------------------------


def test_g3_a_lethal_burn_aimed_at_a_creature_goes_to_the_face() -> None:
    body = CATALOGUE["target: lethal Bolt"]  # opponent at 3
    bears = index_of(body, "targets", "Grizzly Bears")
    opponent = index_of(body, "targets", OPP)
    override = guard(body, TargetDecision((bears,)))
    assert override is not None and override.rule == "lethal-target"
    assert override.decision == TargetDecision((opponent,))
    assert guard(body, TargetDecision((opponent,))) is None


def test_g3_leaves_targets_alone_when_the_burn_is_not_lethal() -> None:
    body = CATALOGUE["target: Bolt kills what it can"]  # opponent at 20
    assert guard(body, TargetDecision((index_of(body, "targets", "Savannah Lions"),))) is None
    t = Table(turn=6, opp_life=2)
    t.theirs("Grizzly Bears")
    body = t.target("Giant Growth", "creature")  # no damage at all
    assert guard(body, TargetDecision((0,))) is None


# ---- G4: blocks to survive -------------------------------------------------------------------------


def chump() -> dict[str, Any]:
    return CATALOGUE["block: chump to survive"]  # 5 life; Craw Wurm 6/4 and Hill Giant 3/3 attack


def test_g4_no_blocks_into_lethal_damage_get_a_chump_block() -> None:
    body = chump()
    override = guard(body, BlockDecision(()))
    assert override is not None and override.rule == "survival-block"
    wurm = index_of(body, "attackers", "Craw Wurm")
    elves = index_of(body, "blockers", "Llanowar Elves")
    assert override.decision == BlockDecision(((elves, wurm),))  # the cheapest blocker on the biggest
    assert "9 damage through at 5 life" in override.reason


def test_g4_keeps_the_models_blocks_and_adds_what_survival_needs() -> None:
    body = chump()
    giant, wurm = index_of(body, "attackers", "Hill Giant"), index_of(body, "attackers", "Craw Wurm")
    lions, elves = index_of(body, "blockers", "Savannah Lions"), index_of(body, "blockers", "Llanowar Elves")
    override = guard(body, BlockDecision(((lions, giant),)))
    assert override is not None and override.decision == BlockDecision(((lions, giant), (elves, wurm)))
    assert guard(body, BlockDecision(((lions, wurm),))) is None  # 3 damage at 5 life: the model's call


def test_g4_leaves_blocks_alone_when_we_survive_or_nothing_saves_us() -> None:
    t = Table(turn=9, phase="COMBAT_DECLARE_BLOCKERS", my_turn=False, my_life=20)
    t.mine("Llanowar Elves")
    a = t.theirs("Craw Wurm", "Hill Giant")
    assert guard(t.block(a), BlockDecision(())) is None
    t = Table(turn=9, phase="COMBAT_DECLARE_BLOCKERS", my_turn=False, my_life=2)
    t.mine("Llanowar Elves")
    a = t.theirs("Craw Wurm", "Hill Giant", "Grizzly Bears")  # one chump cannot stop 9 of 11
    assert guard(t.block(a), BlockDecision(())) is None


def test_g4_respects_evasion_when_adding_blocks() -> None:
    t = Table(turn=9, phase="COMBAT_DECLARE_BLOCKERS", my_turn=False, my_life=4)
    t.mine("Grizzly Bears", "Giant Spider")
    a = t.theirs("Air Elemental")  # 4/4 flier: only the spider (reach) can block it
    body = t.block(a)
    override = guard(body, BlockDecision(()))
    assert override is not None
    assert override.decision == BlockDecision(((index_of(body, "blockers", "Giant Spider"), 0),))


# ---- the legal-choice schemas ----------------------------------------------------------------------

RANGE_KEYWORDS = {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "minItems",
                  "minLength", "maxLength", "multipleOf"}
"""Left to the validator; a list's longest legal length is its maxItems (a model under a grammar
otherwise repeats an entry until max_tokens)."""


def _walk(node: Any) -> list[dict[str, Any]]:
    out = []
    if isinstance(node, dict):
        out.append(node)
        for value in node.values():
            out += _walk(value)
    elif isinstance(node, list):
        for value in node:
            out += _walk(value)
    return out


@pytest.mark.parametrize("name", sorted(CATALOGUE))
def test_every_schema_puts_reasoning_first_and_names_only_offered_options(name: str) -> None:
    request: ForgeRequest = parse_request(CATALOGUE[name])
    schema = schema_for(request)
    assert next(iter(schema["properties"])) == "reasoning"
    assert schema["properties"]["reasoning"]["type"] == "string"
    for node in _walk(schema):
        assert not RANGE_KEYWORDS & set(node), node
        if node.get("type") == "object":  # OpenAI strict mode: all required, nothing extra
            assert node["additionalProperties"] is False and node["required"] == list(node["properties"])
        if "enum" in node:
            assert node["type"] == "integer" and node["enum"] and len(set(node["enum"])) == len(node["enum"])
        if node.get("type") == "array":
            chosen_first = next(n["enum"] for n in _walk(node["items"]) if "enum" in n)  # target, attacker, blocker
            assert 1 <= node["maxItems"] <= len(chosen_first)
    body = CATALOGUE[name]["actionState"]
    enums = [sorted(n["enum"]) for n in _walk(schema) if "enum" in n]
    for key in ("actions", "possible_actions", "targets", "attackers", "defenders", "blockers"):
        if body.get(key):
            offered = sorted(o.get("index", i) for i, o in enumerate(body[key]))
            assert offered in enums or sorted([*offered, -1]) in enums, key


def test_a_request_with_one_possible_answer_is_not_put_to_the_model() -> None:
    t = Table(turn=8, phase="COMBAT_DECLARE_ATTACKERS")
    t.theirs("Hill Giant")  # nothing of ours can attack
    assert not has_choice(parse_request(t.attack()))
    t = Table(turn=8)
    assert not has_choice(parse_request(t.actions()))  # only passing is offered
    assert has_choice(parse_request(CATALOGUE["turn 1: land drop"]))


# ---- llm.guard through the running agent -----------------------------------------------------------


def _records(tmp_path: Path) -> list[dict[str, Any]]:
    out = []
    for path in sorted((tmp_path / "transcripts").glob("*.jsonl")):
        out += [json.loads(line) for line in path.read_text().splitlines()]
    return out


@pytest.mark.parametrize("dialect", ["action", "possible_actions"])
async def test_decided_guard_replaces_a_pass_holding_lethal_and_records_it(
        agent_at: Running, fake_openai: FakeOpenAI, tmp_path: Path, dialect: str) -> None:
    t = Table(turn=6, opp_life=3)
    t.lands(1, "Mountain")
    t.hand("Lightning Bolt", "Grizzly Bears")
    body = t.actions(dialect)
    key = "actions" if dialect == "action" else "possible_actions"
    passing = index_of(body, key, None)
    fake_openai.enqueue(FakeReply.ok_json({"reasoning": "wait and see", "index": passing}))
    async with agent_at(fake_openai) as (_, url), FakeForge(url) as forge:
        exchange = await forge.send(body)
    assert exchange.verdict.decision == {"index": index_of(body, key, "Lightning Bolt")}
    records = _records(tmp_path)
    guard_records = [r for r in records if r["kind"] == "guard"]
    assert len(guard_records) == 1
    g = guard_records[0]
    assert g["rule"] == "lethal-burn" and g["model_choice"] == "passed"
    assert g["replacement"] == "cast spell Lightning Bolt" and "last 3 life" in g["reason"]
    end = next(r for r in records if r["kind"] == "turn_end")
    assert g["turn"] == end["turn"] and end["outcome"] == "guard"


async def test_guard_off_sends_the_models_choice_as_it_is(agent_at: Running, fake_openai: FakeOpenAI,
                                                         tmp_path: Path) -> None:
    body = chump()
    fake_openai.enqueue(FakeReply.ok_json({"reasoning": "take it", "blocks": []}))
    llm = {"base_url": fake_openai.base_url, "model": "fake-model", "api_key_required": False,
           "request_timeout": 5, "retry": {"max_attempts": 1}, "guard": "off"}
    async with agent_at(fake_openai, llm=llm) as (_, url), FakeForge(url) as forge:
        exchange = await forge.send(body)
    assert exchange.verdict.valid and exchange.verdict.decision == {"pairs": []}
    records = _records(tmp_path)
    assert not [r for r in records if r["kind"] == "guard"]
    assert next(r for r in records if r["kind"] == "turn_end")["outcome"] == "llm"


async def test_decided_guard_makes_the_survival_block(agent_at: Running, fake_openai: FakeOpenAI) -> None:
    body = chump()
    fake_openai.enqueue(FakeReply.ok_json({"reasoning": "take it", "blocks": []}))
    async with agent_at(fake_openai) as (_, url), FakeForge(url) as forge:
        exchange = await forge.send(body)
    wurm, elves = index_of(body, "attackers", "Craw Wurm"), index_of(body, "blockers", "Llanowar Elves")
    assert exchange.verdict.valid and exchange.verdict.decision == {"pairs": [(elves, wurm)]}


def test_the_guard_setting_is_checked() -> None:
    from agent.core.config import ConfigError, validate_config
    from agent.games.forge.config import ForgeConfig

    assert ForgeConfig().llm.guard == "decided"
    with pytest.raises(ConfigError, match=r"llm\.guard"):
        validate_config(ForgeConfig, {"llm": {"guard": "always"}}, None)


@pytest.mark.parametrize("llm", ["chaotic", "random-schema"])
@pytest.mark.parametrize("dialect", ["action", "possible_actions"])
async def test_a_chaotic_llm_never_throws_away_a_decided_position(agent_at: Running, fake_openai: FakeOpenAI,
                                                                 dialect: str, llm: str) -> None:
    """The Done-when of the guard: whatever the model and provider do (every misbehaviour, or
    random legal options from the schema), lethal is taken and the survival block made, in both
    dialects, as Forge reads the answers."""
    from agent.core.testing.random_schema import RandomSchemaOptions
    from agent.games.forge.fake.decided import kept, positions
    from agent.games.forge.fake.llm import chaotic

    if llm == "chaotic":
        fake_openai.responder = chaotic(seed=3, stall_s=1.5)
    else:
        fake_openai.random_schema = RandomSchemaOptions()
    thrown = []
    async with agent_at(fake_openai, decision={"deadline": 0.5}) as (_, url), FakeForge(url) as forge:
        for repeat in range(3):
            for name, body in positions(dialect):
                exchange = await forge.send({**body, "gameId": f"{name}-{repeat}"})
                if not (exchange.verdict.valid and kept(body, exchange.verdict.decision)):
                    thrown.append(name)
    assert thrown == []
    assert len(fake_openai.chat_requests) >= 3 * len(positions(dialect))  # every position went to the model
