"""The second reading: a line the rules read nothing in, answered by the meaning a reader gives it."""

from __future__ import annotations

from agent.games.tangram.offline.agent import OfflineAgent


def test_a_line_the_rules_cannot_read_is_answered_by_the_readers_meaning() -> None:
    heard: list[str] = []

    def reader(line: str) -> str | None:
        heard.append(line)
        return "question_next"

    partner = OfflineAgent(reader=reader)
    partner.chat("A cat", {}, "zorp blib")
    assert heard == ["zorp blib"] and partner.last_reply_kind == "next"


def test_a_line_the_rules_read_is_not_given_to_the_reader() -> None:
    heard: list[str] = []
    partner = OfflineAgent(reader=lambda line: heard.append(line) or "thanks")
    partner.chat("A cat", {}, "what's next?")
    assert heard == [] and partner.last_reply_kind == "next"


def test_a_declared_meaning_from_the_reader_gets_its_reply() -> None:
    partner = OfflineAgent(reader=lambda line: "game_slow")
    partner.chat("A cat", {}, "zorp blib")
    assert partner.last_reply_kind == "game_slow"


def test_a_meaning_that_needs_a_piece_the_line_lacks_falls_back_as_before() -> None:
    partner = OfflineAgent(reader=lambda line: "question_where")
    reply = partner.chat("A cat", {}, "zorp blib")
    assert partner.last_reply_kind == "fallback" and "didn't understand" in reply
