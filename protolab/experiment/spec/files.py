"""The files a spec is read from and names: the spec file itself (a path, or a shipped example's
name), and the protocol, variant and draft-table files it uses, each read whole (text and checksum)
so that the workers and --resume use their contents, not their paths."""

from __future__ import annotations

import hashlib
import os
import tomllib
from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path
from typing import Any

from protolab.experiment.spec.checker import Checker, SpecError
from sim.inputs import InputFileError, describe_char, find_control_char, parse_toml, read_input_bytes, read_input_text


@dataclass(frozen=True)
class CardFile:
    """A protocol or variant file the spec uses: its path as written and its exact contents."""

    path: str
    text: str
    sha256: str

    @classmethod
    def of_text(cls, path: str, text: str) -> CardFile:
        """A file known by its contents (a run's saved copy in inputs/)."""
        return cls(path, text, hashlib.sha256(text.encode()).hexdigest())


def examples_dir() -> Path:
    """datasets/experiments of the source tree, or of the installed `protolab_datasets` package."""
    here = Path(__file__).resolve().parents[3] / "datasets" / "experiments"
    if here.is_dir():
        return here

    return Path(str(files("protolab_datasets") / "experiments"))


def find_spec(arg: str) -> Path:
    """A spec path as given, or the name of a shipped example ("demo", "demo.toml",
    "datasets/experiments/demo.toml" from anywhere). A bare name that is a folder here (a `tiers/`
    in the working folder) is no spec file, so the shipped example of that name is meant."""
    p = Path(arg)
    if p.is_file():
        return p
    name = p.name if p.suffix == ".toml" else p.name + ".toml"
    shipped = examples_dir() / name
    bare = "/" not in arg and os.sep not in arg
    if p.exists() and not (bare and p.is_dir() and shipped.is_file()):
        raise SpecError(f"{arg}: not a regular file (a folder, device or pipe); expected an experiment spec file")
    if shipped.is_file():
        return shipped
    known = ", ".join(sorted(x.stem for x in examples_dir().glob("*.toml")))
    raise SpecError(f"{arg}: file not found; expected an experiment spec file or one of the shipped examples ({known})")


def read_card_file(check: Checker, base: Path, raw: Any, key: str) -> CardFile:
    """Read a protocol or variant file named by the spec (relative to the spec's folder)."""
    rel = check.string(raw, key, "the path of a protocol or variant file")
    p = Path(rel) if Path(rel).is_absolute() else base / rel
    if not p.exists():
        raise check.error(
            key,
            f"cannot read {rel!r} ({p}): no such file; expected a protocol or variant "
            "file (docs/cards.md), relative to the spec's folder",
        )
    found = read_beside(check, base, rel, key, "a readable UTF-8 protocol or variant file (docs/cards.md)")
    try:
        parse_toml(found.text)
    except tomllib.TOMLDecodeError as e:
        raise check.error(
            key, f"{rel!r} ({p}) is not valid TOML ({e}); expected a protocol or variant file (docs/cards.md)"
        ) from None
    return found


def read_beside(check: Checker, base: Path, rel: str, key: str, expected: str, what: str = "") -> CardFile:
    """A file the spec names, relative to the spec's folder, read with the input limits and kept
    whole (text and checksum) for the run's inputs/; an unreadable one is an error naming the key."""
    p = Path(rel) if Path(rel).is_absolute() else base / rel
    try:
        data = read_input_bytes(p)
        text = data.decode("utf-8")
    except (InputFileError, UnicodeDecodeError) as e:
        reason = str(e).removeprefix(f"{p}: ")
        raise check.error(key, f"cannot read {what}{rel!r} ({p}): {reason}; expected {expected}") from None
    return CardFile(path=rel, text=text, sha256=hashlib.sha256(data).hexdigest())


def read_spec_file(arg: str | Path) -> tuple[dict[str, Any], str, Path]:
    """(the TOML table, the name to give in errors, the folder its relative paths start from) of a
    spec file or a shipped example's name: every kind of spec (runs, training) is read this way."""
    path = find_spec(str(arg))
    source = str(arg) if Path(str(arg)).is_file() else str(path)
    try:
        raw = parse_toml(read_input_text(path))
    except tomllib.TOMLDecodeError as e:
        raise SpecError(f"{source}: not valid TOML: {e}") from None
    except InputFileError as e:
        raise SpecError(str(e).replace(str(path), source, 1)) from None
    found = find_control_char(raw)
    if found:
        raise SpecError(
            f"{source}: key '{found[0]}': contains the control character {describe_char(found[1])}; "
            "expected printable text"
        )
    return raw, source, path.resolve().parent
