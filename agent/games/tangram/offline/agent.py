"""The offline agent's synchronous core: the planner that plans the figure, and the conversation that
answers the partner's chat and words the planner's lines, put together for one session."""

from __future__ import annotations

from collections.abc import Mapping

from agent.games.tangram.dialogue.conversation import Conversation
from agent.games.tangram.dialogue.fallback import MeaningReader
from agent.games.tangram.dialogue.intents import IntentModel
from agent.games.tangram.dialogue.language import Languages
from agent.games.tangram.dialogue.phrases import Phrases
from agent.games.tangram.geometry.frames import Pose
from agent.games.tangram.planner.library import FigureLibrary
from agent.games.tangram.planner.planner import Planner


class OfflineAgent(Planner):
    """A :class:`~agent.games.tangram.planner.planner.Planner` with its
    :class:`~agent.games.tangram.dialogue.conversation.Conversation`: the conversation sees the plan
    through the planner's narrow interface and words its lines in the partner's language.
    ``phrases``, ``languages`` and ``intents`` go to the conversation (loaded when not given)."""

    def __init__(self, library: FigureLibrary | None = None, phrases: Phrases | None = None,
                 default_figure: str | None = None, languages: Languages | None = None,
                 intents: IntentModel | None = None, reader: MeaningReader | None = None) -> None:
        self.conversation = Conversation(self, phrases, languages, intents, reader)
        super().__init__(library, default_figure, words=self.conversation)

    def chat(self, objective: str, board: Mapping[str, Pose], message: str,
             movers: Mapping[str, str] | None = None) -> str:
        """One reply to ``message`` (:meth:`Conversation.chat`)."""
        return self.conversation.chat(objective, board, message, movers)

    def hear(self, objective: str, board: Mapping[str, Pose], message: str,
             movers: Mapping[str, str] | None = None) -> None:
        """A line another speaker answered (:meth:`Conversation.hear`)."""
        self.conversation.hear(objective, board, message, movers)

    @property
    def last_reply_kind(self) -> str:
        """The kind (phrase key) of the last chat reply, for tests and records."""
        return self.conversation.last_reply_kind

    @property
    def phrases(self) -> Phrases:
        """The English lines (the conversation's)."""
        return self.conversation.phrases

    @property
    def lines(self) -> Phrases:
        """The lines in the partner's language (the conversation's)."""
        return self.conversation.lines
