"""The LLM client, one module per concern.

=============  ==============================================================================
``client``     :class:`LLMClient`: one call, its retries, reading the reply
``dialect``    what one endpoint accepts and drops, the structured-output ladder (pure)
``probe``      the one-token requests that find an endpoint's dialect before play
``errors``     which failures to retry, how long to wait, one key-free line for each
``jsonfind``   the JSON object in a model's reply
``gate``       at most N requests in flight for the process, plays before chats
``result``     :class:`LLMResult` and :class:`LLMAttempt`
``bounds``     free-text fields bounded, max_tokens sized to the schema, cut answers salvaged
``pace``       how long the endpoint's decisions take: a call that cannot end in time is not sent
``window``     the model's context window (told, refused, configured) and whether a prompt fits
``request``    the request body in the endpoint's dialect
``reply``      a completion read into a result
=============  ==============================================================================

Games import from here: ``from agent.core.llm import LLMClient, LLMResult``.
"""

from agent.core.llm.client import PLACEHOLDER_KEY, Compact, LLMClient
from agent.core.llm.dialect import LADDER, Dialect
from agent.core.llm.errors import ReplyTooLarge
from agent.core.llm.gate import LLMGate
from agent.core.llm.jsonfind import MAX_JSON_CANDIDATES, extract_json
from agent.core.llm.result import LLMAttempt, LLMResult, Mode, Priority

__all__ = ["LADDER", "MAX_JSON_CANDIDATES", "PLACEHOLDER_KEY", "Compact", "Dialect", "LLMAttempt", "LLMClient",
           "LLMGate", "LLMResult", "Mode", "Priority", "ReplyTooLarge", "extract_json"]
