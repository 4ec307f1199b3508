"""Tangram: the GAIPS Tangram Collaboration Platform (Godot 4); we serve the WebSocket it dials."""
