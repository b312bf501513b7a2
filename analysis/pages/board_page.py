"""The board page: one self-contained HTML file (no network, like the dashboard) that draws a
game's steps (analysis/pages/board.py) with its own small script, from the template next to this file."""

from __future__ import annotations

import html
import json
from importlib import resources
from pathlib import Path
from typing import Any

from analysis.runs.runfolder import write_atomic

TEMPLATE = "board_template.html"


def json_for_script(data: dict[str, Any]) -> str:
    """JSON that cannot end its <script> element early (no '</' or '<!--' survives)."""
    return json.dumps(data, separators=(",", ":"), ensure_ascii=False).replace("<", "\\u003c")


def template() -> str:
    """The page with __TITLE__ and __DATA__ still to fill in (also carried by the dashboard)."""
    return resources.files("analysis.pages").joinpath(TEMPLATE).read_text(encoding="utf-8")


def render(data: dict[str, Any]) -> str:
    """The page for one game's data (board.game_data)."""
    return template().replace("__TITLE__", html.escape(data["title"])).replace("__DATA__", json_for_script(data))


def write(data: dict[str, Any], path: str | Path) -> int:
    """Write the page whole or not at all (an older file stays as it was); returns its bytes."""
    body = render(data).encode("utf-8")
    write_atomic(path, body)
    return len(body)
