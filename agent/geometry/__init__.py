"""Exact geometry of the game: pieces, frames, collision prediction, repair, relations, feedback and
board descriptions. Import from the submodules (``agent.geometry.repair`` etc.)."""
