"""Both request dialects, every request type, and clear reasons for bodies we cannot answer."""

from __future__ import annotations

import pytest

from agent.games.forge.fake.catalogue import Table, catalogue
from agent.games.forge.models import ActionState, AttackState, BlockState, RequestError, TargetState, parse_request


@pytest.mark.parametrize("dialect", ["action", "possible_actions"])
def test_the_whole_catalogue_parses(dialect: str) -> None:
    for name, body in catalogue(dialect):
        request = parse_request(body)
        assert request.game_id == "catalogue", name
        assert request.options is not None


def test_the_two_dialects_read_alike() -> None:
    t = Table()
    t.lands(2, "Forest")
    t.hand("Forest", "Grizzly Bears")
    seed, spec = parse_request(t.actions("action")), parse_request(t.actions("possible_actions"))
    assert isinstance(seed.options, ActionState) and isinstance(spec.options, ActionState)
    assert [(o.index, o.type, o.card_name, o.card_id) for o in seed.options.options] == \
        [(o.index, o.type, o.card_name, o.card_id) for o in spec.options.options]
    assert spec.request_type == "possible_actions" and seed.request_type == "action"


def test_spec_dialect_card_as_object_and_missing_index() -> None:
    body = {"gameId": 7, "requestType": "possible_actions", "actionState": {"possible_actions": [
        {"type": "cast_spell", "card": {"name": "Shock", "id": 9}}, {"type": "pass_priority"}]}}
    request = parse_request(body)
    assert isinstance(request.options, ActionState)
    first = request.options.options[0]
    assert (first.index, first.card_name, first.card_id) == (0, "Shock", "9")
    assert request.game_id == "7"


def test_variations_of_zones_and_ids() -> None:
    body = {"requestType": "action", "gameState": {"players": [
        {"id": 1, "name": "Me", "hand": ["Forest", {"card_name": "Shock", "card_id": "12"}]},
        {"id": "2", "name": "You", "hand": "Unknown", "battlefield": [{"name": "Grizzly Bears", "power": "2",
                                                                        "toughness": "*"}]}],
        "card_definitions": [{"name": "Shock", "mana_cost": "{R}", "type": "Instant"}]},
        "actionState": {"actions": [{"type": "pass_priority"}]}}
    request = parse_request(body)
    me, you = request.state.players
    assert [c.name for c in me.hand] == ["Forest", "Shock"] and me.hand[1].id == "12"
    assert you.hand == [] and you.hand_hidden
    assert you.battlefield[0].power == 2 and you.battlefield[0].toughness is None
    assert "Shock" in request.state.card_definitions
    assert request.game_id == "default"


def test_each_request_type_gets_its_model() -> None:
    kinds = {parse_request(b).request_type: type(parse_request(b).options) for _, b in catalogue()}
    assert kinds == {"action": ActionState, "target": TargetState, "declare_attackers": AttackState,
                     "declare_blockers": BlockState}
    assert parse_request({"requestType": "reflect"}).options is None


@pytest.mark.parametrize(("body", "message"), [
    ([1, 2], "body must be a JSON object, not list"),
    ({"gameId": "g"}, "missing 'requestType'"),
    ({"requestType": "mulligan"}, "unknown requestType 'mulligan'"),
    ({"requestType": "action"}, "action request has no 'actionState'"),
    ({"requestType": "action", "actionState": {"cards": []}}, "neither 'actions' nor 'possible_actions'"),
    ({"requestType": "action", "actionState": {"actions": "all"}}, "actions must be a list"),
    ({"requestType": "target", "actionState": {"min": 2, "max": 1, "targets": [{}, {}]}},
     "min 2 is greater than max 1"),
    ({"requestType": "target", "actionState": {"min": 2, "max": 2, "targets": [{}]}},
     "needs at least 2 targets but offers 1"),
    ({"requestType": "target", "actionState": {"min": 1, "max": 1}}, "field 'actionState.targets': Field required"),
    ({"requestType": "target", "actionState": [1]}, "'actionState' must be an object, not list"),
    ({"requestType": "declare_blockers", "actionState": {"attackers": [{"index": 0}, {"index": 0}]}},
     "two options share index 0"),
    ({"requestType": "action", "actionState": {"actions": [{}] * 401}}, "at most 400"),
])
def test_malformed_bodies_get_a_clear_reason(body: object, message: str) -> None:
    with pytest.raises(RequestError) as caught:
        parse_request(body)
    assert message in str(caught.value)


def test_an_unreadable_state_is_left_out_not_refused() -> None:
    body = {"requestType": "action", "gameId": {"odd": 1}, "context": ["x"],
            "gameState": {"turn": "soon", "phase": "MAIN1", "stack": "none",
                          "players": [{"id": 1, "name": "Me", "life": "lots", "hand": ["Forest"],
                                       "battlefield": [{"name": "Mountain", "tapped": "maybe"}, {"name": []}]},
                                      "not a player"]},
            "actionState": {"actions": [{"type": "play_land", "card_name": "Forest"}, {"type": "pass_priority"}]}}
    request = parse_request(body)
    assert request.game_id == "default" and request.state.turn == 0 and request.state.phase == "MAIN1"
    me = request.state.players[0]
    assert (me.name, me.life, [c.name for c in me.hand]) == ("Me", 20, ["Forest"])
    assert [c.name for c in me.battlefield] == ["Mountain", ""] and not me.battlefield[0].tapped
    assert len(request.state.players) == 1
    assert any("gameState.turn" in w for w in request.warnings)
    assert any("context is not an object" in w for w in request.warnings)


def test_long_texts_are_cut() -> None:
    body = {"requestType": "action", "actionState": {"actions": [{"type": "cast_spell", "card_name": "x" * 10_000}]}}
    request = parse_request(body)
    assert isinstance(request.options, ActionState)
    assert len(request.options.options[0].card_name) == 4000
