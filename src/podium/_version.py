"""podium's version: the single source (pyproject.toml reads it from here), imported by every module that writes it."""

__version__ = "0.14.0"
