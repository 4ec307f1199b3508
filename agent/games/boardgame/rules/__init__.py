"""Game rules as plugins; see ``registry.py`` for how to add one."""
