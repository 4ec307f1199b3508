"""The Boardgame Protocol: a schema-exact client agent, a reference engine, rules, players and evaluation."""
