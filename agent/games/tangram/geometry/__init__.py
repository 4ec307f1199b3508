"""Exact geometry of the game: pieces, frames, collision prediction, repair, relations, feedback and
board descriptions. Import from the submodules (``agent.games.tangram.geometry.repair`` etc.)."""
