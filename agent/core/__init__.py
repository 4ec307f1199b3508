"""What every game shares: config, the LLM client, templates, transcripts, redaction, memory. Imports no game."""
