"""run.json's top-level keys, the one declaration (docs/data.md): each key's type, and which ones a
run written by an older protolab may lack. A run.json is checked against it once, as it is read
(runfolder.read_manifest) and before it is written, so a hand-edited one is refused in one line
naming the file and the key, and no code writes a key nobody declared. The shard entries are
checked by runfolder. The stored spec (key `spec`, written by protolab.experiment.spec) is read here
as a RunSpec: the parts analysis reads (arms, tiers, seed, draft, events), typed and checked once;
the spec parser reads the stored object itself again on --resume."""

from __future__ import annotations

import copy
import dataclasses
from dataclasses import dataclass, field
from typing import Any

_REQUIRED = object()


class ManifestError(ValueError):
    """A run.json whose keys or types are not what protolab writes."""


@dataclass(frozen=True)
class CardRef:
    """A card file of an arm's pool as run.json records it: its path as written and its checksum."""

    path: str
    sha256: str | None = None


@dataclass(frozen=True)
class SpecArm:
    """One arm (or tier) of the stored spec: its name, pool (sets and card files) and strategies."""

    name: str | None
    sets: tuple[str, ...] = ()
    strategies: tuple[str, ...] = ()
    cards: tuple[CardRef, ...] = ()


@dataclass(frozen=True)
class SpecDraft:
    """The stored spec's draft: its mode, and for mode holding the held protocols and samples."""

    mode: str | None = None
    protocols: tuple[str, ...] = ()
    samples: int = 0


class _Reader:
    """Typed values of the stored spec; ManifestError naming the file and `spec.KEY` otherwise."""

    def __init__(self, where: str):
        self.where = where

    def fail(self, key: str, what: str, value: Any) -> ManifestError:
        return ManifestError(f"{self.where}: key 'spec.{key}': expected {what}, got {value!r:.60}; was it edited?")

    def obj(self, value: Any, key: str) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise self.fail(key, "an object", value)
        return value

    def objs(self, value: Any, key: str) -> list[dict[str, Any]]:
        if not isinstance(value, list):
            raise self.fail(key, "a list of objects", value)
        return [self.obj(v, f"{key}[{i}]") for i, v in enumerate(value)]

    def texts(self, value: Any, key: str) -> tuple[str, ...]:
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise self.fail(key, "a list of strings", value)
        return tuple(value)

    def text(self, value: Any, key: str, optional: bool = False) -> Any:
        if not isinstance(value, str) and not (optional and value is None):
            raise self.fail(key, "a string", value)
        return value

    def number(self, value: Any, key: str, optional: bool = False) -> Any:
        if (isinstance(value, bool) or not isinstance(value, int)) and not (optional and value is None):
            raise self.fail(key, "a whole number", value)
        return value

    def arm(self, raw: dict[str, Any], key: str) -> SpecArm:
        cards = tuple(
            CardRef(
                self.text(c.get("path"), f"{key}.cards[{i}].path"),
                self.text(c.get("sha256"), f"{key}.cards[{i}].sha256", optional=True),
            )
            for i, c in enumerate(self.objs(raw.get("cards", []), f"{key}.cards"))
        )
        return SpecArm(
            self.text(raw.get("name"), f"{key}.name", optional=True),
            self.texts(raw.get("sets", []), f"{key}.sets"),
            self.texts(raw.get("strategies", []), f"{key}.strategies"),
            cards,
        )

    def draft(self, raw: dict[str, Any]) -> SpecDraft:
        return SpecDraft(
            self.text(raw.get("mode"), "draft.mode", optional=True),
            self.texts(raw.get("protocols", []), "draft.protocols"),
            self.number(raw.get("samples", 0), "draft.samples"),
        )


@dataclass(frozen=True)
class RunSpec:
    """run.json's `spec`: `stored` is the object as written (hashed, and read again by the spec
    parser on --resume); the rest is what readers of a run use, typed. A hand-made run may lack
    any of it: missing parts are empty (no arms, no tiers, seed None, events of every game)."""

    stored: dict[str, Any]
    arms: tuple[SpecArm, ...] = ()
    tiers: tuple[str, ...] = ()
    seed: int | None = None
    swap: bool = False
    draft: SpecDraft | None = None
    events: bool | str | float = True

    @classmethod
    def of(cls, raw: Any, where: str) -> RunSpec:
        """The typed stored spec of run.json `where`; ManifestError on a part of the wrong type."""
        r = _Reader(where)
        spec = r.obj(raw, "") if raw is not None else {}
        seats = r.obj(spec.get("seats", {}), "seats")
        events = spec.get("events", True)
        if not isinstance(events, bool | str | int | float):
            raise r.fail("events", 'true, false, "none" or a fraction', events)
        swap = seats.get("swap", False)
        if not isinstance(swap, bool):
            raise r.fail("seats.swap", "true or false", swap)
        return cls(
            stored=spec,
            arms=tuple(r.arm(a, f"arms[{i}]") for i, a in enumerate(r.objs(spec.get("arms", []), "arms"))),
            tiers=r.texts(spec.get("tiers", []), "tiers"),
            seed=r.number(spec.get("seed"), "seed", True),
            swap=swap,
            draft=r.draft(r.obj(spec["draft"], "draft")) if "draft" in spec else None,
            events=events,
        )

    @property
    def arm_names(self) -> list[str | None]:
        return [a.name for a in self.arms]


def _key(types: tuple[type, ...], what: str, default: Any = _REQUIRED) -> Any:
    meta = {"types": types, "what": what}
    if default is _REQUIRED:
        return field(metadata=meta)
    return field(default_factory=lambda: copy.copy(default), metadata=meta)


_TEXT, _NUMBER, _OBJECT, _LIST = (
    ((str,), "a string"),
    ((int,), "a whole number"),
    ((dict,), "an object"),
    ((list,), "a list"),
)


@dataclass(kw_only=True)
class Manifest:
    """run.json: what the run plays (its spec, pools and layout), with what, and what is recorded."""

    run_id: str = _key(*_TEXT)
    format: int = _key(*_NUMBER)
    complete: bool = _key((bool,), "true or false")
    spec: RunSpec = _key((dict, RunSpec), "an object")
    spec_hash: str = _key(*_TEXT)
    games: int = _key(*_NUMBER)
    shards: list[dict[str, Any]] = _key(*_LIST)
    pool_hash: str | None = _key(*_TEXT, None)
    pool_hashes: dict[str, str] | None = _key(*_OBJECT, None)
    engine_version: str | None = _key(*_TEXT, None)
    protolab_version: str | None = _key(*_TEXT, None)
    versions: dict[str, str] | None = _key(*_OBJECT, None)
    seed_scheme: int | None = _key(*_NUMBER, None)
    arms: int | None = _key(*_NUMBER, None)
    matchups: int | None = _key(*_NUMBER, None)
    games_per_matchup: int | None = _key(*_NUMBER, None)
    shard_count: int | None = _key(*_NUMBER, None)
    shard_games: int | None = _key(*_NUMBER, None)  # runs made before shards were capped: none
    inputs: dict[str, str] | None = _key(*_OBJECT, None)
    created: str | None = _key(*_TEXT, None)
    finished: str | None = _key(*_TEXT, None)
    sessions: list[dict[str, Any]] = _key(*_LIST, [])
    models: list[dict[str, Any]] | None = _key(*_LIST, None)  # learned models played (analysis/runs/models.py)
    stop: dict[str, Any] | None = _key(*_OBJECT, None)  # an A/B run that stopped once settled (docs/experiments.md)

    @classmethod
    def of(cls, raw: Any, where: str) -> Manifest:
        """The manifest in `raw` (parsed JSON), its keys and types checked; ManifestError naming
        `where` (the file) and the first key that is unknown, missing or of the wrong type."""
        if not isinstance(raw, dict):
            raise ManifestError(f"{where}: expected a JSON object, got {type(raw).__name__}; was it edited?")
        fields = {f.name: f for f in dataclasses.fields(cls)}
        for name in raw:
            if name not in fields:
                raise ManifestError(
                    f"{where}: key {name!r}: not a run.json key (expected one of {', '.join(fields)}); was it edited?"
                )
        for name, f in fields.items():
            if name not in raw:
                if f.default_factory is dataclasses.MISSING:
                    raise ManifestError(f"{where}: key {name!r}: missing; was it edited?")
                continue
            value, types = raw[name], f.metadata["types"]
            wrong = (isinstance(value, bool) and bool not in types) or not isinstance(value, types)
            if wrong and not (value is None and f.default_factory is not dataclasses.MISSING):
                raise ManifestError(
                    f"{where}: key {name!r}: expected {f.metadata['what']}, got {value!r:.60}; was it edited?"
                )
        spec = raw["spec"] if isinstance(raw["spec"], RunSpec) else RunSpec.of(raw["spec"], where)
        return cls(**{**raw, "spec": spec})

    def to_json(self) -> dict[str, Any]:
        """The keys run.json holds, in declaration order; optional keys left unset are left out."""
        out = {
            f.name: getattr(self, f.name)
            for f in dataclasses.fields(self)
            if getattr(self, f.name) is not None or f.name == "finished"
        }
        return {**out, "spec": self.spec.stored}

    def checked(self, where: str) -> Manifest:
        """This manifest checked again (after code changed it), as it would be read back."""
        return Manifest.of(self.to_json(), where)
