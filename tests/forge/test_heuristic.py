"""Each heuristic rule (numbered as in docs/forge.md) on a board built from real cards."""

from __future__ import annotations

from agent.games.forge.decisions import ActionDecision, AttackDecision, BlockDecision, TargetDecision
from agent.games.forge.fake.catalogue import Table, catalogue
from agent.games.forge.heuristic import action_key, decide
from agent.games.forge.models import ActionState, parse_request
from agent.games.forge.view import build_view


def chosen_action(body: dict) -> str:
    request = parse_request(body)
    decision = decide(request).decision
    assert isinstance(decision, ActionDecision) and isinstance(request.options, ActionState)
    if decision.index is None:
        return "pass"
    option = next(o for o in request.options.options if o.index == decision.index)
    return "pass" if option.is_pass else f"{option.type} {option.card_name}"


def targets(body: dict) -> list[str]:
    request = parse_request(body)
    decision = decide(request).decision
    assert isinstance(decision, TargetDecision)
    names = {t["index"]: t["name"] for t in body["actionState"]["targets"]}
    return [names[i] for i in decision.indices]


def attackers(body: dict) -> list[str]:
    decision = decide(parse_request(body)).decision
    assert isinstance(decision, AttackDecision)
    names = {a["index"]: a["name"] for a in body["actionState"]["attackers"]}
    return sorted(names[a] for a, _ in decision.pairs)


def blocks(body: dict) -> list[tuple[str, str]]:
    decision = decide(parse_request(body)).decision
    assert isinstance(decision, BlockDecision)
    bs = {b["index"]: b["name"] for b in body["actionState"]["blockers"]}
    at = {a["index"]: a["name"] for a in body["actionState"]["attackers"]}
    return sorted((bs[b], at[a]) for b, a in decision.pairs)


# ---- A: main decisions ------------------------------------------------------------------------------


def test_a1_land_first_and_the_colour_the_hand_needs() -> None:
    t = Table(turn=2)
    t.lands(1, "Mountain")
    t.hand("Mountain", "Forest", "Grizzly Bears", "Craw Wurm")
    assert chosen_action(t.actions()) == "play_land Forest"
    for dialect in ("action", "possible_actions"):
        assert chosen_action(t.actions(dialect)) == "play_land Forest"


def test_a2_casts_the_best_affordable_spell_and_skips_what_it_cannot_pay() -> None:
    t = Table()
    t.lands(3, "Forest")
    t.hand("Grizzly Bears", "Centaur Courser")
    assert chosen_action(t.actions()) == "cast_spell Centaur Courser"
    wurm = {"type": "cast_spell", "card_id": 999, "card_name": "Craw Wurm", "mana_cost": "{4}{G}{G}"}
    offered_anyway = [*t.offered_actions(), wurm]
    t.hand("Craw Wurm")
    assert chosen_action(t.actions(options=offered_anyway)) == "cast_spell Centaur Courser"


def test_a3_counterspell_only_against_the_opponents_spell() -> None:
    t = Table(my_turn=False)
    t.lands(2, "Island")
    t.hand("Counterspell")
    t.stack("Serra Angel")
    assert chosen_action(t.actions()) == "cast_spell Counterspell"
    quiet = Table(my_turn=False)
    quiet.lands(2, "Island")
    quiet.hand("Counterspell")
    assert chosen_action(quiet.actions()) == "pass"
    own = Table(my_turn=True)
    own.lands(2, "Island")
    own.hand("Counterspell")
    own.stack("Divination", controller="Agent")
    assert chosen_action(own.actions()) == "pass"


def test_a4_mana_abilities_are_not_activated() -> None:
    t = Table()
    t.mine("Llanowar Elves")
    assert chosen_action(t.actions()) == "pass"


def test_a5_abilities_used_when_they_remove_something() -> None:
    body = dict(catalogue())["activated abilities: ping, not mana"]
    assert chosen_action(body) == "activate_ability Prodigal Sorcerer"
    assert chosen_action(dict(catalogue())["firebreathing is not spent in main 1"]) == "pass"


def test_a6_an_action_that_came_back_is_not_chosen_again() -> None:
    t = Table()
    t.lands(2, "Forest")
    t.hand("Grizzly Bears")
    body = t.actions()
    request = parse_request(body)
    first = decide(request)
    assert isinstance(first.decision, ActionDecision) and isinstance(request.options, ActionState)
    option = next(o for o in request.options.options if o.index == first.decision.index)
    again = decide(request, tried={action_key(build_view(request), option)})
    assert again.decision == ActionDecision(None)


def test_a7_possible_actions_without_pass_picks_the_cheapest() -> None:
    t = Table(my_turn=False)
    t.lands(3, "Mountain")
    t.hand("Hill Giant", "Shock")
    body = t.actions("possible_actions", options=[
        {"type": "cast_spell", "card_id": 1, "card_name": "Hill Giant", "mana_cost": "{3}{R}"},
        {"type": "cast_spell", "card_id": 2, "card_name": "Shock", "mana_cost": "{R}"}])
    assert chosen_action(body) == "cast_spell Shock"


def test_a8_burn_for_lethal_beats_everything() -> None:
    t = Table(opp_life=3)
    t.lands(5, "Mountain")
    t.hand("Hill Giant", "Lightning Bolt", "Mountain")
    assert chosen_action(t.actions()) == "cast_spell Lightning Bolt"


def test_a9_removal_waits_for_a_target_and_sorceries_wait_for_our_main_phase() -> None:
    t = Table()
    t.lands(2, "Swamp")
    t.hand("Doom Blade")
    assert chosen_action(t.actions()) == "pass"
    t.theirs("Air Elemental")
    assert chosen_action(t.actions()) == "cast_spell Doom Blade"
    wrath = Table(my_turn=False)
    wrath.lands(4, "Plains")
    wrath.theirs("Serra Angel", "Air Elemental")
    wrath.hand("Wrath of God")
    options: list[dict[str, object]] = [
        {"type": "cast_spell", "card_id": 1, "card_name": "Wrath of God", "mana_cost": "{2}{W}{W}"},
        {"type": "pass_priority"}]
    assert chosen_action(wrath.actions(options=options)) == "pass"


def test_a10_sweeper_only_when_the_board_favours_them() -> None:
    assert chosen_action(dict(catalogue())["main 2: Wrath a board that favours them"]) == "cast_spell Wrath of God"
    t = Table(phase="MAIN2")
    t.lands(4, "Plains")
    t.mine("Serra Angel", "Air Elemental")
    t.theirs("Savannah Lions")
    t.hand("Wrath of God")
    assert chosen_action(t.actions()) == "pass"


def test_a11_pump_only_in_combat() -> None:
    t = Table()
    t.lands(1, "Forest")
    t.mine("Grizzly Bears")
    t.hand("Giant Growth")
    assert chosen_action(t.actions()) == "pass"
    assert chosen_action(dict(catalogue())["combat: pump the attacker"]) == "cast_spell Giant Growth"


# ---- T: targets ------------------------------------------------------------------------------------


def test_t1_removal_hits_the_most_valuable_creature_it_kills() -> None:
    t = Table()
    t.mine("Serra Angel")
    t.theirs("Savannah Lions", "Hill Giant", "Air Elemental")
    assert targets(t.target("Lightning Bolt")) == ["Hill Giant"]
    assert targets(t.target("Doom Blade", "creature")) == ["Air Elemental"]


def test_t2_burn_goes_face_when_lethal() -> None:
    t = Table(opp_life=2)
    t.theirs("Hill Giant")
    assert targets(t.target("Shock")) == ["Opponent"]


def test_t3_never_our_own_things_when_there_is_a_choice() -> None:
    t = Table()
    t.mine("Craw Wurm")
    assert targets(t.target("Lightning Bolt")) == ["Opponent"]
    assert targets(t.target("Giant Growth", "creature")) == ["Craw Wurm"]


def test_t4_a_forced_count_takes_the_least_bad_remaining() -> None:
    t = Table()
    t.mine("Llanowar Elves", "Craw Wurm")
    t.theirs("Grizzly Bears")
    assert targets(t.target("Forked Bolt", "creature", 2, 2)) == ["Grizzly Bears", "Llanowar Elves"]


def test_t5_multi_target_takes_every_good_target_up_to_max() -> None:
    assert targets(dict(catalogue())["target: Forked Bolt, up to two"]) == ["Grizzly Bears", "Savannah Lions"]


def test_t6_counterspell_targets_the_opponents_spell() -> None:
    t = Table(my_turn=False)
    t.stack("Divination", controller="Agent")
    t.stack("Air Elemental")
    assert targets(t.target("Counterspell", "spell")) == ["Air Elemental"]


# ---- C: attacks ------------------------------------------------------------------------------------


def test_c1_all_in_when_lethal() -> None:
    assert attackers(dict(catalogue())["attack: lethal through one blocker"]) == [
        "Centaur Courser", "Goblin Guide", "Grizzly Bears"]


def test_c2_only_attackers_no_blocker_eats() -> None:
    assert attackers(dict(catalogue())["attack: safe attackers only"]) == ["Centaur Courser", "Serra Angel"]


def test_c2_fliers_go_over_ground_blockers() -> None:
    t = Table(phase="COMBAT_DECLARE_ATTACKERS")
    t.mine("Air Elemental", "Grizzly Bears")
    t.theirs("Craw Wurm")
    assert attackers(t.attack()) == ["Air Elemental"]
    t.theirs("Giant Spider")  # reach: 2/4 blocks the 4/4 flier and dies, so still safe
    assert attackers(t.attack()) == ["Air Elemental"]


def test_c3_holds_back_enough_to_survive_the_crack_back() -> None:
    t = Table(phase="COMBAT_DECLARE_ATTACKERS", my_life=3)
    t.mine("Centaur Courser", "Grizzly Bears")
    t.theirs("Hill Giant", "Goblin Guide", "Savannah Lions", tapped=False)
    assert attackers(t.attack()) == []


def test_c4_no_attack_when_nothing_is_offered() -> None:
    t = Table(phase="COMBAT_DECLARE_ATTACKERS")
    assert attackers(t.attack()) == []


# ---- B: blocks -----------------------------------------------------------------------------------


def test_b1_b2_eat_and_trade_but_fliers_pass() -> None:
    assert blocks(dict(catalogue())["block: eat, trade, wall; fliers pass"]) == [
        ("Centaur Courser", "Grizzly Bears"), ("Typhoid Rats", "Hill Giant")]


def test_b2_no_bad_trades() -> None:
    t = Table(my_turn=False)
    t.mine("Serra Angel")
    a = t.theirs("Vampire Nighthawk")  # deathtouch: the Angel would die for a 3-drop
    assert blocks(t.block(a)) == []


def test_b3_walls_stop_damage_for_free() -> None:
    t = Table(my_turn=False)
    t.mine("Wall of Omens")
    a = t.theirs("Hill Giant")
    assert blocks(t.block(a)) == [("Wall of Omens", "Hill Giant")]


def test_b4_chump_only_to_survive() -> None:
    assert blocks(dict(catalogue())["block: chump to survive"]) == [("Llanowar Elves", "Craw Wurm")]
    t = Table(my_turn=False, my_life=20)
    t.mine("Llanowar Elves")
    a = t.theirs("Craw Wurm")
    assert blocks(t.block(a)) == []


def test_b5_menace_and_evasion_are_respected() -> None:
    t = Table(my_turn=False, my_life=2)
    t.mine("Grizzly Bears", "Centaur Courser")
    a = t.theirs("Air Elemental")
    assert blocks(t.block(a)) == []  # cannot block a flier without reach, even when it is lethal


def test_every_catalogue_answer_is_valid_and_fast() -> None:
    import time

    for dialect in ("action", "possible_actions"):
        for name, body in catalogue(dialect):
            request = parse_request(body)
            started = time.perf_counter()
            choice = decide(request)
            assert choice.reason, name
            assert time.perf_counter() - started < 0.5, name  # generous; the benchmark measures p99


def test_t1_damage_that_kills_nothing_goes_face() -> None:
    t = Table()
    t.theirs("Serra Angel", "Craw Wurm")
    assert targets(t.target("Lightning Bolt")) == ["Opponent"]


def test_t7_a_combat_trick_goes_to_a_creature_in_combat() -> None:
    t = Table(my_turn=False, phase="COMBAT_DECLARE_BLOCKERS")
    t.lands(1, "Forest")
    t.mine("Craw Wurm")
    spider = t.mine("Giant Spider")
    t.mine_bf[-1]["blocking"] = True
    t.theirs("Air Elemental")
    t.hand("Giant Growth")
    assert chosen_action(t.actions()) == "cast_spell Giant Growth"
    assert targets(t.target("Giant Growth", "creature")) == ["Giant Spider"]
    assert spider
    calm = Table(my_turn=False, phase="COMBAT_DECLARE_BLOCKERS")
    calm.lands(1, "Forest")
    calm.mine("Craw Wurm")
    attacker = calm.theirs("Air Elemental")
    calm.theirs_bf[-1]["attacking"] = True
    calm.hand("Giant Growth")
    assert attacker and chosen_action(calm.actions()) == "pass"  # none of ours fights: keep it


def test_a2_mana_creatures_pay_like_lands() -> None:
    t = Table()
    t.lands(2, "Forest")
    t.mine("Llanowar Elves")
    t.hand("Centaur Courser")
    options: list[dict[str, object]] = [
        {"type": "cast_spell", "card_id": 77, "card_name": "Centaur Courser", "mana_cost": "{2}{G}"},
        {"type": "pass_priority"}]
    assert chosen_action(t.actions(options=options)) == "cast_spell Centaur Courser"
