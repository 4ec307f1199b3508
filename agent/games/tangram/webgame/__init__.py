"""The real GAIPS game in a browser: a Godot main pack built from the game's sources by our own code.

``pck`` writes and reads Godot main packs, ``ctex`` the texture container inside them, ``source``
reads a GAIPS clone or its bare git mirror, ``project`` picks what the engine needs from it,
``template`` checks a Godot web export template, ``build`` puts it all in a cache folder, ``serve``
serves that folder on loopback with the headers the engine needs, and ``launch`` is what
``python -m agent --browser-game DIR`` runs. See docs/browser-game.md.
"""
