"""Tangram's conversation: the words the partner reads, in each language the agent speaks.

- :func:`partner_line` (one line of ``words/partner_lines.yaml`` in a language),
  :func:`line_language` (the language a partner's line is answered in).
"""

from agent.games.tangram.dialogue.partner_lines import (
    LANGUAGES,
    PartnerLines,
    line_language,
    load_partner_lines,
    partner_line,
)

__all__ = ["LANGUAGES", "PartnerLines", "line_language", "load_partner_lines", "partner_line"]
