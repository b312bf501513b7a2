"""The installed protolab version, recorded in every run's manifest and printed by `--version`."""

from __future__ import annotations

import tomllib
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path


def protolab_version() -> str:
    """The distribution's version; in an uninstalled checkout, the one pyproject.toml declares."""
    try:
        return version("protolab")
    except PackageNotFoundError:
        pyproject = Path(__file__).resolve().parents[1] / "pyproject.toml"
        if pyproject.is_file():
            return tomllib.loads(pyproject.read_text())["project"]["version"]
        return "unknown"
