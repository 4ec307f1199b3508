"""The AI's turn in tangram as a pure state machine (no sockets, no asyncio, no clock reads).

:class:`TurnMachine` takes :mod:`events` and returns :mod:`actions`; the session
(:mod:`agent.games.tangram.link.session`) is its transport. docs/turns.md has the phases as a diagram.
:mod:`reports` reads what the game's reports mean for our pieces; :mod:`lines` and :mod:`thinking`
give the words of the turn's own chat lines (the machine decides which).
"""

from agent.games.tangram.turn.machine import TurnMachine
from agent.games.tangram.turn.state import Phase, TurnRules

__all__ = ["Phase", "TurnMachine", "TurnRules"]
