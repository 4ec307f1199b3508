"""The words of the conversation: the planner's phrases (phrases.yaml, phrases.pt.yaml), the partner's
other lines (partner_lines.yaml), the meanings' examples (intents.yaml) and the language markers
(languages.yaml). Data only: a package so that the wheel ships them."""
