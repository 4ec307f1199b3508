"""Studies: conditions, counterbalanced orders and participants, run by the agent itself.

A study file (:mod:`.study_file`) names the conditions (each a game config, or a config with
overrides) and the design; :mod:`.plan` turns the design into the order sequences (balanced Latin
squares from :mod:`.latin` for a within-subject design); :mod:`.store` keeps participants and
games in an embedded SQLite database; :class:`.run.StudyRun` is what a game server asks which
participant and condition a new game connection belongs to. Nothing here knows a game.
"""
