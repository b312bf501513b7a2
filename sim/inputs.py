"""Reading the files a user hands to protolab (card files, specs, scenarios, draft tables, run.json)
with a size limit, so `/dev/zero`, a pipe or a runaway file ends in one clear error instead of a
process that grows without bound; and spotting control characters (terminal escape codes) in text
that protolab would print."""

from __future__ import annotations

import os
import stat
import tomllib
import unicodedata
from pathlib import Path
from typing import Any

MAX_INPUT_BYTES = 4 * 1024 * 1024  # card files, specs, scenarios, draft tables
MAX_MANIFEST_BYTES = 256 * 1024 * 1024  # run.json and its journal: about 1 KB per shard
ALLOWED_CONTROLS = "\n\t"  # line breaks and tabs are fine in card text
MAX_NESTING = 32  # arrays and tables inside one another in a TOML input


class InputFileError(ValueError):
    """An input file that cannot be used as given: missing, not a regular file, too large or not
    UTF-8. The message starts with the path."""


def _mb(n: int) -> str:
    return f"{n / (1024 * 1024):g} MB"


def read_input_bytes(path: str | Path, limit: int = MAX_INPUT_BYTES) -> bytes:
    """The whole file, refusing anything that is not a regular file or is larger than `limit`.
    Opened without blocking, so a named pipe is refused rather than waited on."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except FileNotFoundError:
        raise InputFileError(f"{path}: file not found") from None
    except OSError as e:
        raise InputFileError(f"{path}: cannot be read ({e.strerror or e})") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise InputFileError(f"{path}: not a regular file (a folder, device or pipe); expected a text file")
        if st.st_size > limit:  # said before reading any of it
            raise InputFileError(f"{path}: {st.st_size:,} bytes, larger than {_mb(limit)}; expected a small text file")
        data = _read_at_most(fd, limit + 1)  # and bounded, for a file that grows while read
    except OSError as e:
        raise InputFileError(f"{path}: cannot be read ({e.strerror or e})") from None
    finally:
        os.close(fd)
    if len(data) > limit:
        raise InputFileError(f"{path}: larger than {_mb(limit)}; expected a small text file")
    return data


def _read_at_most(fd: int, n: int) -> bytes:
    parts, size = [], 0
    while size < n:
        block = os.read(fd, min(1 << 20, n - size))
        if not block:
            break
        parts.append(block)
        size += len(block)
    return b"".join(parts)


def read_input_text(path: str | Path, limit: int = MAX_INPUT_BYTES) -> str:
    """`read_input_bytes` decoded as UTF-8."""
    data = read_input_bytes(path, limit)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise InputFileError(f"{path}: not UTF-8 text (byte {e.start} is {data[e.start]:#04x})") from None


def parse_toml(text: str) -> dict[str, Any]:
    """`tomllib.loads`, refusing values nested more than MAX_NESTING deep with a TOMLDecodeError
    (what every caller already reports in one line): tomllib recurses once per level, so a few KB of
    `[[[[...` would otherwise end in a RecursionError thousands of lines long."""
    try:
        raw = tomllib.loads(text)
    except RecursionError:
        raise tomllib.TOMLDecodeError(
            f"values nested too deeply; expected at most {MAX_NESTING} levels of arrays and tables inside one another"
        ) from None
    if _depth(raw) > MAX_NESTING:
        raise tomllib.TOMLDecodeError(
            f"values nested more than {MAX_NESTING} levels deep; expected at most "
            f"{MAX_NESTING} levels of arrays and tables inside one another"
        )
    return raw


def _depth(data: Any) -> int:
    """How many arrays and tables lie inside one another in parsed data (without recursing)."""
    deepest, stack = 0, [(data, 1)]
    while stack:
        value, level = stack.pop()
        children = value.values() if isinstance(value, dict) else value if isinstance(value, list) else None
        if children is None:
            continue
        deepest = max(deepest, level)
        if level <= MAX_NESTING:
            stack.extend((c, level + 1) for c in children)
    return deepest


def control_char(text: str) -> str | None:
    """The first control character in `text` (other than a line break or tab), else None."""
    for ch in text:
        if ch not in ALLOWED_CONTROLS and unicodedata.category(ch) == "Cc":
            return ch
    return None


def find_control_char(data: Any, key: str = "") -> tuple[str, str] | None:
    """(key, character) of the first string in parsed TOML/JSON data holding a control character;
    keys are dotted with [i] for list items, e.g. cards[2].top.text."""
    if isinstance(data, str):
        ch = control_char(data)
        return None if ch is None else (key, ch)
    items = data.items() if isinstance(data, dict) else enumerate(data) if isinstance(data, list) else ()
    for k, v in items:
        sub = f"{key}[{k}]" if isinstance(k, int) else (f"{key}.{k}" if key else str(k))
        found = find_control_char(k, sub) if isinstance(k, str) else None
        found = found or find_control_char(v, sub)
        if found:
            return found
    return None


def describe_char(ch: str) -> str:
    """U+001B (ESC), for messages."""
    name = {"\x1b": "ESC", "\r": "carriage return", "\x07": "bell", "\x08": "backspace", "\x00": "NUL"}.get(ch)
    return f"U+{ord(ch):04X}" + (f" ({name})" if name else "")
