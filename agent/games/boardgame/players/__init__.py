"""Players: pure decision functions (search, random) and the LLM player, behind one async interface."""
