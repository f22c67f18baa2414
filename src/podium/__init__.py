"""podium: exact, fast scoring of computer-vision challenges."""

__version__ = "0.4.0"  # the single source: pyproject.toml reads it from here
