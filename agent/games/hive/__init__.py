"""Hive Arena: a TCP bee arena; we connect, play one match with the offline strategy and an LLM coach.

At this level: the wire format (:mod:`.protocol`), the rules (:mod:`.rules`), the config and the
game's entry (:mod:`.game`), and the three commands: the local arena (:mod:`.arena`), the
evaluation (:mod:`.eval`) and the replay report (:mod:`.replay`). The rest is in rooms: ``strategy``,
``coach``, ``link``, ``opponents``.
"""
