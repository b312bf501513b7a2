"""run.json's top-level keys, the one declaration (docs/data.md): each key's type, and which ones a
run written by an older protolab may lack. A run.json is checked against it once, as it is read
(runfolder.read_manifest) and before it is written, so a hand-edited one is refused in one line
naming the file and the key, and no code writes a key nobody declared. The shard entries are
declared here too (ShardEntry), checked as they are read. The stored spec (key `spec`, written
by protolab.experiment.spec) is read here as a RunSpec: the parts analysis reads (arms, tiers,
seed, draft, events), typed and checked once; the spec parser reads the stored object itself
again on --resume."""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, cast

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError

from sim.schema import problem

_REQUIRED = object()
TABLES = ("games", "events", "cards", "compiles", "tallies")  # the shard tables, one folder each


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


@dataclass(frozen=True)
class ShardFile:
    """One table's file of a shard as its entry records it: the path in the run folder, and (where
    recorded: older runs lack some) its size, SHA-256 and row count."""

    kind: str
    path: str
    size: int | None
    sha256: str | None
    rows: int | None


_COUNT = Field(default=None, ge=0, description="a whole number at least 0")
_TEXT_OR_NONE = Field(default=None, description="a string")


class ShardEntry(BaseModel):
    """One element of run.json `shards` (and one line of the journal): which games the shard holds
    and, per table, its file, size, checksum and rows. Keys a protolab before this one wrote and
    this one does not know are kept as they are (extra="allow"); the keys' order as read is kept,
    so a run.json read and written again is the same bytes."""

    model_config = ConfigDict(extra="allow", strict=True)

    index: int = Field(ge=0, description="a whole number at least 0")
    arm: str | None = _TEXT_OR_NONE
    first_game: int | None = _COUNT
    games: int = Field(ge=0, description="a whole number at least 0")
    matchups: list[int] | None = Field(default=None, description="[first, last] matchup numbers")
    games_rows: int | None = _COUNT
    games_file: str | None = _TEXT_OR_NONE
    games_bytes: int | None = _COUNT
    games_sha256: str | None = _TEXT_OR_NONE
    events_rows: int | None = _COUNT
    events_file: str | None = _TEXT_OR_NONE
    events_bytes: int | None = _COUNT
    events_sha256: str | None = _TEXT_OR_NONE
    cards_rows: int | None = _COUNT
    cards_file: str | None = _TEXT_OR_NONE
    cards_bytes: int | None = _COUNT
    cards_sha256: str | None = _TEXT_OR_NONE
    compiles_rows: int | None = _COUNT
    compiles_file: str | None = _TEXT_OR_NONE
    compiles_bytes: int | None = _COUNT
    compiles_sha256: str | None = _TEXT_OR_NONE
    tallies_rows: int | None = _COUNT
    tallies_file: str | None = _TEXT_OR_NONE
    tallies_bytes: int | None = _COUNT
    tallies_sha256: str | None = _TEXT_OR_NONE
    worker: dict[str, Any] | None = Field(default=None, description="an object")  # where and how it ran
    written_by: str | None = _TEXT_OR_NONE  # "worker", or "driver" (the fallback)
    _order: tuple[str, ...] = PrivateAttr(default=())

    @classmethod
    def of(cls, raw: Any, where: str, key: str = "") -> ShardEntry:
        """The entry in `raw` (parsed JSON), checked; ManifestError naming `where` (the file, or the
        journal's line) and the key (`key`: "shards[3]", or "" for a journal line)."""
        if not isinstance(raw, dict):
            named = f"key '{key}': " if key else ""
            raise ManifestError(f"{where}: {named}expected a shard entry (an object), got {raw!r:.60}; was it edited?")
        try:
            entry = cls.model_validate(raw)
        except ValidationError as e:
            p = problem(e, cls)
            dotted = f"{key}.{p.key}" if key and p.key else key or p.key
            raise ManifestError(f"{where}: key '{dotted}': {p.message}; was it edited?") from None
        entry._order = tuple(raw)
        return entry

    def files(self) -> Iterator[ShardFile]:
        """The table files the entry lists, in TABLES order (a run from before a table existed lists none of it)."""
        for kind in TABLES:
            f = self.file(kind)
            if f is not None:
                yield f

    def file(self, kind: str) -> ShardFile | None:
        """The entry's file of table `kind`, or None when it lists none."""
        path = cast(str | None, getattr(self, f"{kind}_file"))
        if path is None:
            return None
        size, digest, rows = (getattr(self, f"{kind}_{x}") for x in ("bytes", "sha256", "rows"))
        return ShardFile(kind, path, size, digest, rows)

    def to_json(self) -> dict[str, Any]:
        """The stored form: the keys given, in the order read (then any set since, in declaration order)."""
        given = {k: v for k, v in self.__dict__.items() if k in self.__pydantic_fields_set__}
        given.update(self.__pydantic_extra__ or {})
        read: tuple[str, ...] = (self.__pydantic_private__ or {}).get("_order", ())  # self._order, 20x faster
        if len(read) == len(given):  # as read (or made), nothing set since
            return {k: given[k] for k in read}
        order = [k for k in read if k in given] + [k for k in given if k not in read]
        return {k: given[k] for k in order}


def _key(types: tuple[type, ...], what: str, default: Any = _REQUIRED) -> Any:
    meta = {"types": types, "what": what}
    if default is _REQUIRED:
        return field(metadata=meta)
    return field(default_factory=lambda: copy.copy(default), metadata=meta)


def _check_key(raw: dict[str, Any], f: dataclasses.Field[Any], where: str) -> None:
    """A run.json key against its declaration (_key): present unless optional, of its types (an
    optional key may be null); ManifestError naming `where` and the key."""
    optional = f.default_factory is not dataclasses.MISSING
    if f.name not in raw:
        if not optional:
            raise ManifestError(f"{where}: key {f.name!r}: missing; was it edited?")
        return
    value, types = raw[f.name], f.metadata["types"]
    wrong = (isinstance(value, bool) and bool not in types) or not isinstance(value, types)
    if wrong and not (value is None and optional):
        raise ManifestError(
            f"{where}: key {f.name!r}: expected {f.metadata['what']}, got {value!r:.60}; was it edited?"
        )


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
    shards: list[ShardEntry] = _key(*_LIST)
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
        for f in fields.values():
            _check_key(raw, f, where)
        spec = raw["spec"] if isinstance(raw["spec"], RunSpec) else RunSpec.of(raw["spec"], where)
        shards = [
            s if isinstance(s, ShardEntry) else ShardEntry.of(s, where, f"shards[{i}]")
            for i, s in enumerate(raw["shards"])
        ]
        return cls(**{**raw, "spec": spec, "shards": shards})

    @property
    def arms_played(self) -> set[str | None]:
        """The arms (or tiers) that have a recorded shard."""
        return {s.arm for s in self.shards}

    def to_json(self) -> dict[str, Any]:
        """The keys run.json holds, in declaration order; optional keys left unset are left out."""
        return {**self._keys(), "spec": self.spec.stored, "shards": [s.to_json() for s in self.shards]}

    def _keys(self) -> dict[str, Any]:
        return {
            f.name: getattr(self, f.name)
            for f in dataclasses.fields(self)
            if getattr(self, f.name) is not None or f.name == "finished"
        }

    def checked(self, where: str) -> Manifest:
        """This manifest checked again (after code changed it), as it would be read back: its keys;
        its typed shard entries were checked as they were made."""
        return Manifest.of(self._keys(), where)
