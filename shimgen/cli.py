"""The `shimgen` console script's entry (`shimgen.cli:main` in pyproject.toml and in every installed script): the
command itself is shimgen.tools.cli."""

from shimgen.tools.cli import main

__all__ = ["main"]
