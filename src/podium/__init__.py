"""podium: exact, fast scoring of computer-vision challenges."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("podium")
except PackageNotFoundError:  # running from a source tree that is not installed
    __version__ = "0.0.0+unknown"
