"""Transcripts to tables and a summary a study team can read without writing code.

``python -m agent.analyze TRANSCRIPTS_DIR --out DIR`` reads every ``*.jsonl`` transcript below the
folder (any game's), writes tidy tables (one row per session, turn, chat reply and LLM call) as
CSV, and as Parquet when pyarrow is installed, and an HTML summary with plots grouped by any tag.
It needs the optional ``analysis`` extra (pandas, matplotlib): ``pip install 'tangram-agent[analysis]'``.
"""
