"""The reference engine: ``python -m agent.games.boardgame.engine --game tictactoe --port 8765 --bot strong``."""
