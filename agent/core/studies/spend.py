"""An online study's LLM spend as it happens, against the study file's caps.

```python
meter = SpendMeter(spec, store)     # spec: the study's online section; store: its database
await meter.follow("L0007")         # at a game's start: the totals seeded from the database once
game = GameSpend(price, meter.account("L0007"))   # one game: priced from its transcript's llm records
game.watch(transcript)
game.refusal()                      # at its start and before each call: why no more may be sent, or None
```

The database holds each game's spend when the game ends (``games.spend_usd``); the meter holds
what was recorded before this process served the participant (read once: the study's total at the
first game, a participant's at their first game) plus every call priced since, for each
participant and for the study, in memory. So the caps hold within a game, at the next call, and
checking them costs no query. When a participant or the study crosses a cap, one warning says so
and each subscriber (the experimenter console) hears it once.

Nothing here knows a game: a game's calls are priced from the ``llm`` records its transcript makes
(every game records its calls the same way), at the condition's price (pricing.py).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass

from agent.core.studies.pricing import Price
from agent.core.studies.store import StudyStore
from agent.core.studies.study_file import OnlineSpec
from agent.core.transcript import Transcript

log = logging.getLogger(__name__)


def usd(value: float) -> str:
    """Dollars as the lines show them: cents from a dollar up, six places below (tiny test caps)."""
    if value >= 1.0:
        return f"${value:,.2f}"
    text = f"{value:.6f}".rstrip("0")
    return f"${text}{'0' * max(0, 2 - len(text.split('.')[1]))}"


class SpendMeter:
    """The running totals of one online study, shared by all its games."""

    def __init__(self, spec: OnlineSpec, store: StudyStore) -> None:
        self.spec = spec
        self.store = store
        self._study: float | None = None
        self._participants: dict[str, float] = {}
        self._crossed: set[str] = set()
        """The caps already announced: participant ids, and "" for the study's."""
        self._listeners: list[Callable[[str], None]] = []

    @property
    def capped(self) -> bool:
        """The study file sets a cap."""
        return self.spec.spend_cap_participant_usd is not None or self.spec.spend_cap_study_usd is not None

    def subscribe(self, listener: Callable[[str], None]) -> None:
        """``listener(line)`` once when the study, and once when each participant, reaches a cap."""
        self._listeners.append(listener)

    async def follow(self, participant: str) -> None:
        """Seed the totals from the database (the study's once, the participant's at their first
        game in this process); call before the participant's game starts."""
        if self._study is None:
            spent = await self.store.spend()
            if self._study is None:
                self._study = spent
        if participant not in self._participants:
            spent = await self.store.spend(participant)
            self._participants.setdefault(participant, spent)

    def spent(self, participant: str | None = None) -> float:
        """Spend so far (US dollars) of ``participant``, or of the study."""
        if participant is None:
            return self._study or 0.0
        return self._participants.get(participant, 0.0)

    def add(self, participant: str, cost: float) -> None:
        """One call of ``participant``'s game cost ``cost`` dollars."""
        if cost <= 0:
            return
        self._study = (self._study or 0.0) + cost
        self._participants[participant] = self._participants.get(participant, 0.0) + cost
        cap = self.spec.spend_cap_study_usd
        if cap is not None and self._study >= cap and "" not in self._crossed:
            self._crossed.add("")
            self._tell(f"the study's LLM spend {usd(self._study)} reached its cap {usd(cap)}: the offline planner "
                       "plays every game from now on (running games at their next LLM call)")
        cap = self.spec.spend_cap_participant_usd
        spent = self._participants[participant]
        if cap is not None and spent >= cap and participant not in self._crossed:
            self._crossed.add(participant)
            self._tell(f"participant {participant}'s LLM spend {usd(spent)} reached the cap {usd(cap)}: the offline "
                       "planner plays the rest of their games")

    def over(self, participant: str) -> str | None:
        """Why ``participant``'s LLM calls are over a cap (one line), or None while under both."""
        cap = self.spec.spend_cap_study_usd
        if cap is not None and self.spent() >= cap:
            return f"the study's LLM spend {usd(self.spent())} reached its cap {usd(cap)}"
        cap = self.spec.spend_cap_participant_usd
        if cap is not None and self.spent(participant) >= cap:
            return f"participant {participant}'s LLM spend {usd(self.spent(participant))} reached the cap {usd(cap)}"
        return None

    def account(self, participant: str) -> ParticipantSpend:
        return ParticipantSpend(self, participant)

    def _tell(self, line: str) -> None:
        log.warning("%s", line)
        for listener in list(self._listeners):
            try:
                listener(line)
            except Exception:  # a console must never cost a game its spend record
                log.exception("a spend listener failed")


@dataclass(frozen=True)
class ParticipantSpend:
    """One participant's side of the meter: what their games' transcripts add each call's cost to,
    and the :class:`~agent.core.llm.spend_guard.SpendGuard` their players ask before each call."""

    meter: SpendMeter
    participant: str

    def add(self, cost: float) -> None:
        self.meter.add(self.participant, cost)

    def refusal(self) -> str | None:
        return self.meter.over(self.participant)


class GameSpend:
    """One game's LLM spend: each call the game's transcript records, priced at the condition's
    ``price``, added to the game's total (:attr:`usd`, for ``games.spend_usd``) and to the
    participant's running totals; and the one place the caps are decided for the game
    (:meth:`refusal`: the :class:`~agent.core.llm.spend_guard.SpendGuard` its player asks before each
    call, and what its server asks before the game starts)."""

    def __init__(self, price: Price | None, account: ParticipantSpend | None = None) -> None:
        self.price = price
        self.account = account
        self.usd = 0.0
        self.spend_cap: str | None = None
        """Why a spend cap switched this game to the planner (its ``spend_cap`` record), if one did."""

    def watch(self, transcript: Transcript) -> None:
        transcript.listen(self._heard)

    def refusal(self) -> str | None:
        return None if self.account is None else self.account.refusal()

    def _heard(self, kind: str, data: dict[str, object]) -> None:
        if kind == "llm" and self.price is not None:
            cost = self.price.of(data.get("prompt_tokens"), data.get("completion_tokens"))
            self.usd += cost
            if self.account is not None:
                self.account.add(cost)
        elif kind == "spend_cap" and self.spend_cap is None:
            self.spend_cap = str(data.get("reason", ""))
