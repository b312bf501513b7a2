"""run.json's top-level keys, the one declaration (docs/data.md): each key's type, and which ones a
run written by an older protolab may lack. A run.json is checked against it once, as it is read
(runfolder.read_manifest) and before it is written, so a hand-edited one is refused in one line
naming the file and the key, and no code writes a key nobody declared. The shard entries are
checked by runfolder; the stored spec by the spec parser, which reads it again on --resume."""

from __future__ import annotations

import copy
import dataclasses
from dataclasses import dataclass, field
from typing import Any

_REQUIRED = object()


def _key(types: tuple[type, ...], what: str, default: Any = _REQUIRED) -> Any:
    meta = {"types": types, "what": what}
    if default is _REQUIRED:
        return field(metadata=meta)
    return field(default_factory=lambda: copy.copy(default), metadata=meta)


_TEXT, _NUMBER, _OBJECT, _LIST = ((str,), "a string"), ((int,), "a whole number"), ((dict,), "an object"), \
    ((list,), "a list")


@dataclass(kw_only=True)
class Manifest:
    """run.json: what the run plays (its spec, pools and layout), with what, and what is recorded."""

    run_id: str = _key(*_TEXT)
    format: int = _key(*_NUMBER)
    complete: bool = _key((bool,), "true or false")
    spec: dict[str, Any] = _key(*_OBJECT)
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
    shard_games: int | None = _key(*_NUMBER, None)          # runs made before shards were capped: none
    inputs: dict[str, str] | None = _key(*_OBJECT, None)
    created: str | None = _key(*_TEXT, None)
    finished: str | None = _key(*_TEXT, None)
    sessions: list[dict[str, Any]] = _key(*_LIST, [])
    stop: dict[str, Any] | None = _key(*_OBJECT, None)      # an A/B run that stopped once settled (docs/experiments.md)

    @classmethod
    def of(cls, raw: Any, where: str) -> Manifest:
        """The manifest in `raw` (parsed JSON), its keys and types checked; ManifestError naming
        `where` (the file) and the first key that is unknown, missing or of the wrong type."""
        if not isinstance(raw, dict):
            raise ManifestError(f"{where}: expected a JSON object, got {type(raw).__name__}; was it edited?")
        fields = {f.name: f for f in dataclasses.fields(cls)}
        for name in raw:
            if name not in fields:
                raise ManifestError(f"{where}: key {name!r}: not a run.json key (expected one of "
                                    f"{', '.join(fields)}); was it edited?")
        for name, f in fields.items():
            if name not in raw:
                if f.default_factory is dataclasses.MISSING:
                    raise ManifestError(f"{where}: key {name!r}: missing; was it edited?")
                continue
            value, types = raw[name], f.metadata["types"]
            wrong = (isinstance(value, bool) and bool not in types) or not isinstance(value, types)
            if wrong and not (value is None and f.default_factory is not dataclasses.MISSING):
                raise ManifestError(f"{where}: key {name!r}: expected {f.metadata['what']}, got {value!r:.60}; "
                                    "was it edited?")
        return cls(**raw)

    def to_json(self) -> dict[str, Any]:
        """The keys run.json holds, in declaration order; optional keys left unset are left out."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)
                if getattr(self, f.name) is not None or f.name == "finished"}


class ManifestError(ValueError):
    """A run.json whose keys or types are not what protolab writes."""
