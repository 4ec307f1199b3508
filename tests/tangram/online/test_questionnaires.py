"""Questionnaires in an online participant's flow, through the page's calls: consent, the first
questionnaire, each game followed by its questionnaire, the final one, the completion code. Every
page is saved at once and checked by the server (kind, range, required, the participant's current
page); a reload finds the page and what was entered; a failed attention check screens the
participant out with its own code and gives their order sequence to the next; a withdrawal deletes
their answers, games and transcripts."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import aiohttp

from agent.games.tangram.sim.client import GameClient
from tests.questionnaire_study import QUESTIONNAIRES
from tests.tangram.online.support import STUDY, Served, served_study

Q_STUDY = STUDY + "  screen_out_code: SCR33N\n" + QUESTIONNAIRES

ABOUT = {"age": 30, "games": "other"}
PARTNER = {"helped": 4, "hindered": 2, "effort": 70, "check": "blue"}


async def post(http: aiohttp.ClientSession, served: Served, path: str, **body: Any) -> tuple[int, Any]:
    async with http.post(f"{served.url}/api/{path}", json=body) as response:
        data = await response.json() if response.content_type == "application/json" else await response.text()
        return response.status, data


async def play(served: Served, http: aiohttp.ClientSession, code: str) -> dict[str, Any]:
    """The participant's current game, played (two AI turns) and ended; their next page."""
    status, game = await post(http, served, "game", code=code)
    assert status == 200 and game["ticket"], game
    async with GameClient(f"{served.ws_url}?ticket={game['ticket']}", seed=1) as client:
        for _ in range(2):
            assert (await client.ai_turn(deadline=20)).finished
    status, visit = await post(http, served, "finished", code=code, ticket=game["ticket"], exit=0)
    assert status == 200, visit
    return visit


async def consented(http: aiohttp.ClientSession, served: Served, language: str | None = None) -> tuple[str, Any]:
    (invite,) = await served.online.invite(1)
    status, _ = await post(http, served, "consent", code=invite.code, given=True)
    assert status == 200
    status, visit = await post(http, served, "visit", code=invite.code, language=language)
    assert status == 200
    return invite.code, visit


async def test_a_participant_goes_through_every_page_and_the_answers_are_stored_as_entered(tmp_path: Path) -> None:
    async with served_study(tmp_path, study_text=Q_STUDY) as served, aiohttp.ClientSession() as http:
        code, visit = await consented(http, served, "pt")
        assert visit["stage"] == "questionnaire" and visit["language"] == "pt"
        page = visit["page"]
        assert page["title"] == "Sobre si" and [i["id"] for i in page["items"]] == ["age", "games", "hello"]
        # No game before the first questionnaire is answered.
        status, game = await post(http, served, "game", code=code)
        assert status == 200 and game["ticket"] is None and game["visit"]["stage"] == "questionnaire"
        status, visit = await post(http, served, "answers", code=code, step=page["step"], language="pt",
                                   answers=ABOUT, other={"games": "<b>xadrez</b>"})
        assert status == 200 and visit["stage"] == "play", visit
        conditions = []
        for game_number in (1, 2):
            visit = await play(served, http, code)
            assert visit["stage"] == "questionnaire" and visit["page"]["title"] == "O seu parceiro neste jogo"
            items = visit["page"]["items"]
            assert {i["id"] for i in items} == set(PARTNER) and all("correct" not in i and "scale" not in i
                                                                    for i in items)
            status, visit = await post(http, served, "answers", code=code, step=visit["page"]["step"],
                                       answers={**PARTNER, "helped": game_number + 2})
            assert status == 200
            conditions.append((await served.run.store.games("L0001"))[-1].condition)
        assert visit["stage"] == "questionnaire"
        final = visit["page"]
        assert final["items"][0]["text"] == "Com quem voltaria a jogar: o primeiro parceiro ou o segundo parceiro?"
        assert [o["value"] for o in final["items"][0]["options"]] == ["1", "2"]
        status, visit = await post(http, served, "answers", code=code, step=final["step"], answers={"preferred": "2"})
        assert status == 200 and visit["stage"] == "done" and visit["completion_code"] == "C0DE42"
        answers = await served.run.store.answers("L0001")
        by_item = {(a["step"], a["item"]): a for a in answers}
        assert by_item[(1, "age")]["value"] == 30 and by_item[(1, "games")]["other"] == "<b>xadrez</b>"
        assert by_item[(1, "hello")]["value"] is None
        assert by_item[(3, "helped")]["value"] == 3 and by_item[(5, "helped")]["value"] == 4
        assert by_item[(6, "preferred")]["value"] == "2" and by_item[(6, "why")]["value"] is None
        assert {a["language"] for a in answers} == {"pt"} and all(a["seconds"] >= 0 for a in answers)
        row = await served.run.store.participant("L0001")
        assert row is not None and row.state == "completed" and row.place == "done" and row.language == "pt"
        assert conditions == list(row.conditions)


async def test_refused_answers_store_nothing_and_say_why(tmp_path: Path) -> None:
    async with served_study(tmp_path, study_text=Q_STUDY) as served, aiohttp.ClientSession() as http:
        code, visit = await consented(http, served)
        other_code, other_visit = await consented(http, served)
        step = visit["page"]["step"]
        cases = [
            ({"age": 17, "games": "never"}, "age: a number from 18 to 99"),
            ({"age": 30.5, "games": "never"}, "age: a whole number"),
            ({"games": "never"}, "age: an answer is required"),
            ({"age": 30, "games": "sometimes"}, "games: 'sometimes' is none of the options"),
            ({"age": 30, "games": "other"}, "games: the 'other' choice needs its text"),
            ({"age": 30, "games": "never", "shoe": 3}, "shoe: no such item on this page"),
            ({"age": 30, "games": "never", "hello": "x" * 201}, "hello: at most 200 characters"),
        ]
        for answers, problem in cases:
            status, body = await post(http, served, "answers", code=code, step=step, answers=answers)
            assert status == 422 and problem in body["problems"], (answers, body)
        # A page that is not the participant's current one: a later step, another participant's code.
        status, body = await post(http, served, "answers", code=code, step=step + 2, answers=ABOUT,
                                  other={"games": "x"})
        assert status == 409 and "not your current page" in body["problems"][0]
        status, body = await post(http, served, "answers", code="A" * 24, step=step, answers={"age": 30})
        assert status == 403
        # Oversized and malformed bodies.
        async with http.post(f"{served.url}/api/answers", data=b"{" + b" " * 70_000 + b"}",
                             headers={"Content-Type": "application/json"}) as response:
            assert response.status == 413
        status, body = await post(http, served, "answers", code=code, step=step, answers={"age": {"x": 1}})
        assert status == 400
        assert await served.run.store.answers() == []
        # The other participant's page is still theirs to answer.
        status, body = await post(http, served, "answers", code=other_code, step=other_visit["page"]["step"],
                                  answers={"age": 40, "games": "never"})
        assert status == 200 and body["stage"] == "play"
        # The same page twice: the second is refused.
        status, body = await post(http, served, "answers", code=other_code, step=other_visit["page"]["step"],
                                  answers={"age": 41, "games": "never"})
        assert status == 409
        assert [a["value"] for a in await served.run.store.answers() if a["item"] == "age"] == [40]


async def test_a_reload_returns_to_the_same_page_with_what_was_entered(tmp_path: Path) -> None:
    async with served_study(tmp_path, study_text=Q_STUDY) as served, aiohttp.ClientSession() as http:
        code, visit = await consented(http, served)
        step = visit["page"]["step"]
        status, _ = await post(http, served, "draft", code=code, step=step, answers={"age": 52}, other={"games": "x"})
        assert status == 204
        status, again = await post(http, served, "visit", code=code)
        assert again["page"]["step"] == step and again["page"]["draft"] == {"answers": {"age": 52},
                                                                            "other": {"games": "x"}}
        status, _ = await post(http, served, "draft", code=code, step=step + 1, answers={"age": 1})
        assert status == 409
        # The random order is drawn once per participant and page, and kept.
        await post(http, served, "answers", code=code, step=step, answers={"age": 52, "games": "never"})
        after = await play(served, http, code)
        order = [i["id"] for i in after["page"]["items"]]
        status, again = await post(http, served, "visit", code=code)
        assert [i["id"] for i in again["page"]["items"]] == order
        (page,) = [p for p in await served.run.store.pages("L0001") if p.step == after["page"]["step"]]
        assert list(page.item_order) == order


async def test_a_failed_attention_check_screens_out_and_frees_the_sequence(tmp_path: Path) -> None:
    async with served_study(tmp_path, study_text=Q_STUDY) as served, aiohttp.ClientSession() as http:
        code, visit = await consented(http, served)
        await post(http, served, "answers", code=code, step=visit["page"]["step"],
                   answers={"age": 30, "games": "never"})
        visit = await play(served, http, code)
        status, visit = await post(http, served, "answers", code=code, step=visit["page"]["step"],
                                   answers={**PARTNER, "check": "red"})
        assert status == 200 and visit["stage"] == "screened_out" and visit["completion_code"] == "SCR33N"
        assert "C0DE42" not in str(visit)
        status, game = await post(http, served, "game", code=code)
        assert game["ticket"] is None and game["visit"]["stage"] == "screened_out"
        row = await served.run.store.participant("L0001")
        assert row is not None and (row.state, row.outcome, row.attention_failures) == ("dropped", "screened_out", 1)
        # Their answers stay (the page was submitted); the next participant gets their sequence.
        assert any(a["item"] == "check" and a["value"] == "red" for a in await served.run.store.answers())
        await consented(http, served)
        nxt = await served.run.store.participant("L0002")
        assert nxt is not None and nxt.sequence == row.sequence


async def test_withdrawing_deletes_the_participants_answers_games_and_transcripts(tmp_path: Path) -> None:
    async with served_study(tmp_path, study_text=Q_STUDY) as served, aiohttp.ClientSession() as http:
        code, visit = await consented(http, served)
        await post(http, served, "answers", code=code, step=visit["page"]["step"],
                   answers={"age": 30, "games": "other"}, other={"games": "secret hobby"})
        visit = await play(served, http, code)
        transcripts = [served.run.transcript_of(g) for g in await served.run.store.games("L0001")]
        assert transcripts and all(t is not None and t.exists() for t in transcripts)
        status, body = await post(http, served, "withdraw", code=code)
        assert status == 400  # the page confirms first
        status, body = await post(http, served, "withdraw", code=code, confirm=True)
        assert status == 200 and body == {"stage": "withdrawn"}
        store = served.run.store
        assert await store.answers() == [] and await store.pages() == [] and await store.games("L0001") == []
        assert all(t is not None and not t.exists() for t in transcripts)
        assert [e for e in await store.events() if e["participant"] == "L0001"] == []
        assert [w["participant"] for w in await store.withdrawals()] == ["L0001"]
        row = await store.participant("L0001")
        assert row is not None and (row.state, row.outcome, row.consent) == ("dropped", "withdrawn", None)
        status, visit = await post(http, served, "visit", code=code)
        assert visit["stage"] == "withdrawn"
        # Nothing of their free text remains in the database's files (freed pages are zeroed, the log emptied).
        dump = await asyncio.to_thread(lambda: b"".join(p.read_bytes() for p in tmp_path.glob("study.db*")))
        assert b"secret hobby" not in dump
        # The balance: the next participant gets the withdrawn one's sequence.
        await consented(http, served)
        nxt = await store.participant("L0002")
        assert nxt is not None and nxt.sequence == row.sequence
