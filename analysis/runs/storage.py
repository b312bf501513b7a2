"""Where a run lives: a local folder, a shared disk, or an object store (`s3://bucket/runs`,
`gs://bucket/runs`, anything `pyarrow.fs.FileSystem.from_uri` resolves), behind one small
path-like interface over pyarrow's filesystem layer, so that the run folder's code (runfolder.py,
the analysis) has one code path for all of them.

Credentials and endpoints come from the usual places (pyarrow reads them): for S3 the
environment (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN, AWS_REGION,
AWS_ENDPOINT_URL for an S3-compatible server) or ~/.aws/config and credentials; for GCS the
application-default credentials. The two things that differ by kind of store are kept here:
a whole-file write (temporary name then rename on a filesystem; one put, visible only when
complete, on an object store) and appending (a filesystem appends to the journal; an object
store cannot, so each journal entry is its own object).

Every call on an object store is bounded (`--storage-timeout`, PROTOLAB_STORAGE_TIMEOUT, default
30 s): it runs in a helper thread while the caller waits for at most that long, so an endpoint that
accepts connections and never answers ends in one line, and Ctrl-C stops the wait at once; the
store's own requests get the same limit (S3's connect and request timeouts), so Parquet reads inside
DuckDB end too."""

from __future__ import annotations

import contextlib
import fnmatch
import os
import posixpath
import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import TYPE_CHECKING, TypeVar

import pyarrow as pa
import pyarrow.fs as pafs

from sim.inputs import MAX_INPUT_BYTES, InputFileError, read_input_text

if TYPE_CHECKING:
    import duckdb

T = TypeVar("T")
TIMEOUT_ENV = "PROTOLAB_STORAGE_TIMEOUT"
DEFAULT_TIMEOUT = 30.0
MAX_TIMEOUT = 86_400.0


class StorageError(ValueError):
    """A run location that cannot be opened (unknown scheme, no credentials); one readable line."""


def check_storage_timeout(seconds: float) -> float:
    """A storage time limit in seconds: more than 0, up to a day."""
    if not 0 < seconds <= MAX_TIMEOUT:  # also refuses nan
        raise ValueError(f"expected more than 0 and at most {MAX_TIMEOUT:,.0f} seconds, got {seconds}")
    return seconds


def set_storage_timeout(seconds: float) -> None:
    """Set the limit for this process and the Ray workers it starts (through the environment)."""
    os.environ[TIMEOUT_ENV] = repr(check_storage_timeout(seconds))


def storage_timeout() -> float:
    """The limit in force: PROTOLAB_STORAGE_TIMEOUT, else the default."""
    text = os.environ.get(TIMEOUT_ENV)
    if text is None:
        return DEFAULT_TIMEOUT
    try:
        return check_storage_timeout(float(text))
    except ValueError as e:
        raise StorageError(f"environment variable {TIMEOUT_ENV}={text!r}: {e}") from None


_LEFT_BEHIND = threading.Event()
_SILENT: set[str] = set()  # stores that let a request time out: later calls fail at once


def requests_left_behind() -> bool:
    """Whether a request was given up on (timed out or interrupted) and may still be waiting: the
    store's clean-up at exit would wait for it, so the command exits without that clean-up."""
    return _LEFT_BEHIND.is_set()


def bounded(what: str, call: Callable[[], T], store: str = "") -> T:
    """`call()` (a request to an object store), waited for at most `storage_timeout()` seconds.
    It runs in a daemon thread: the caller's wait is interrupted by Ctrl-C at once (a blocking call
    inside pyarrow would see the signal only once it returned), and a request that never ends is
    left behind, its own request timeout ending it later. Once a `store` let a request time out,
    later calls on it fail at once (a command would otherwise wait out the limit once per call)."""
    limit = storage_timeout()
    silent = (
        f"{what}: no answer from the object store within {limit:g} s; expected a reachable endpoint "
        "(AWS_ENDPOINT_URL, the network) or a longer --storage-timeout"
    )
    if store and store in _SILENT:
        raise StorageError(silent)
    box: dict[str, object] = {}
    done = threading.Event()

    def work() -> None:
        try:
            box["value"] = call()
        except BaseException as e:  # noqa: BLE001 - handed to the waiting caller, raised there
            box["error"] = e
        finally:
            done.set()

    threading.Thread(target=work, name="protolab-storage", daemon=True).start()
    try:
        answered = done.wait(limit)
    except BaseException:  # Ctrl-C: stop waiting now
        _LEFT_BEHIND.set()
        raise
    if not answered:
        _LEFT_BEHIND.set()
        if store:
            _SILENT.add(store)
        raise StorageError(silent)
    if "error" in box:
        raise box["error"]  # type: ignore[misc]
    return box["value"]  # type: ignore[return-value]


def is_uri(text: str) -> bool:
    """`scheme://...` (but not a Windows drive or a plain path)."""
    scheme, sep, _ = text.partition("://")
    return bool(sep) and scheme.isalnum() and len(scheme) > 1


@dataclass(frozen=True, eq=False)
class Location:
    """A file or folder on some filesystem: `fs` and its path there, plus how to name it to a user
    (`text`: the path or URI as given, joined with '/') and to a worker on another machine (`uri`)."""

    fs: pafs.FileSystem
    path: str  # the filesystem's own path: absolute locally, `bucket/key` on S3 and GCS
    text: str  # for messages
    prefix: str = ""  # `s3://` and the like; empty for local paths
    query: str = ""  # `?endpoint_override=...` when given in the URI, kept for child locations

    # -- naming ----------------------------------------------------------------------------------
    @property
    def is_local(self) -> bool:
        return isinstance(self.fs, pafs.LocalFileSystem)

    @property
    def uri(self) -> str:
        """What another process (a Ray worker) opens with `location()`: an absolute path or a URI."""
        return self.path if self.is_local else f"{self.prefix}{self.path}{self.query}"

    @property
    def name(self) -> str:
        return posixpath.basename(self.path.rstrip("/"))

    @property
    def parent(self) -> Location:
        return Location(
            self.fs,
            posixpath.dirname(self.path.rstrip("/")),
            posixpath.dirname(self.text.rstrip("/")),
            self.prefix,
            self.query,
        )

    def __truediv__(self, rel: str) -> Location:
        rel = str(rel)
        return Location(
            self.fs, posixpath.join(self.path, rel), posixpath.join(self.text, rel), self.prefix, self.query
        )

    def with_name(self, name: str) -> Location:
        return self.parent / name

    def __str__(self) -> str:
        return self.text + (self.query if not self.is_local else "")

    def __repr__(self) -> str:
        return f"Location({str(self)!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Location) and (self.prefix, self.path) == (other.prefix, other.path)

    def __hash__(self) -> int:
        return hash((self.prefix, self.path))

    def __fspath__(self) -> str:
        if not self.is_local:
            raise TypeError(f"{self}: not a local path")
        return self.text

    def resolve(self) -> Location:
        return self

    def relative_to(self, other: Location) -> str:
        return posixpath.relpath(self.path, other.path)

    def is_relative_to(self, other: Location) -> bool:
        return self.prefix == other.prefix and (self.path + "/").startswith(other.path.rstrip("/") + "/")

    @property
    def public(self) -> Path | Location:
        """A pathlib.Path for a local location (what callers and tests always had), else itself."""
        return Path(self.text) if self.is_local else self

    def call(self, fn: Callable[[], T]) -> T:
        """`fn()` directly on a local filesystem; on an object store within the storage time limit."""
        return fn() if self.is_local else bounded(str(self), fn, _endpoint(self.prefix, self.query))

    # -- looking ---------------------------------------------------------------------------------
    def info(self) -> pafs.FileInfo:
        try:
            return self.call(lambda: self.fs.get_file_info(self.path))
        except OSError as e:
            raise StorageError(f"{self}: cannot be reached ({why_refused(e)})") from None

    def exists(self) -> bool:
        return bool(self.info().type != pafs.FileType.NotFound)

    def is_file(self) -> bool:
        return bool(self.info().type == pafs.FileType.File)

    def is_dir(self) -> bool:
        return bool(self.info().type == pafs.FileType.Directory)

    def stat(self) -> SimpleNamespace:
        info = self.info()
        if info.type == pafs.FileType.NotFound:
            raise FileNotFoundError(str(self))
        return SimpleNamespace(st_size=info.size or 0)

    def files(self, recursive: bool = True) -> list[Location]:
        """Every file below this folder (none if it does not exist), sorted by path."""
        sel = pafs.FileSelector(self.path, recursive=recursive, allow_not_found=True)
        try:
            infos = self.call(lambda: self.fs.get_file_info(sel))
        except OSError as e:
            raise StorageError(f"{self}: cannot be listed ({why_refused(e)})") from None
        base = self.path.rstrip("/")
        return sorted(
            (self / posixpath.relpath(i.path, base) for i in infos if i.type == pafs.FileType.File),
            key=lambda loc: loc.path,
        )

    def rglob(self, pattern: str) -> list[Location]:
        return [f for f in self.files() if fnmatch.fnmatch(f.name, pattern)]

    def glob(self, pattern: str) -> list[Location]:
        return [f for f in self.files(recursive=False) if fnmatch.fnmatch(f.name, pattern)]

    # -- reading ---------------------------------------------------------------------------------
    def open_input(self) -> pa.NativeFile:
        """A random-access file (Parquet footers, checksums)."""
        return self.call(lambda: self.fs.open_input_file(self.path))

    def read_bytes(self) -> bytes:
        def whole() -> bytes:
            with self.fs.open_input_file(self.path) as f:
                return bytes(f.read())

        return self.call(whole)

    def read_text(self, limit: int = MAX_INPUT_BYTES) -> str:
        """The file's text, refused past `limit` bytes (and, locally, when not a regular file:
        sim.inputs' checks, so a device or a pipe is named, never read)."""
        if self.is_local:
            return read_input_text(Path(self.text), limit)
        info = self.info()
        if info.type != pafs.FileType.File:
            raise InputFileError(f"{self}: no such file")
        if (info.size or 0) > limit:
            raise InputFileError(f"{self}: {info.size:,} bytes; expected at most {limit:,}")
        try:
            return self.read_bytes().decode("utf-8")
        except UnicodeDecodeError as e:
            raise InputFileError(f"{self}: not UTF-8 text (byte {e.start})") from None

    # -- writing ---------------------------------------------------------------------------------
    def mkdir(self, parents: bool = True, exist_ok: bool = True) -> None:
        """A folder (locally); on an object store folders are only key prefixes, so nothing is made."""
        if self.is_local:
            Path(self.path).mkdir(parents=parents, exist_ok=exist_ok)

    def write_atomic(self, data: bytes) -> None:
        """The whole file or nothing under this name: locally a hidden temporary file in the same folder,
        fsync, rename; on an object store one put (multipart uploads too become visible only when
        complete)."""
        if not self.is_local:

            def put() -> None:
                with self.fs.open_output_stream(self.path) as out:
                    out.write(data)

            self.call(put)
            return
        final = Path(self.path)
        tmp = final.with_name(f".{final.name}.{uuid.uuid4().hex[:12]}.tmp")
        try:
            with open(tmp, "wb") as f:
                f.write(data)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, final)
        except OSError as e:
            if e.filename is not None:
                raise
            # a write or flush that fails (a full disk) names no file: name the one being written
            raise OSError(e.errno, e.strerror, str(final)) from None
        finally:
            with contextlib.suppress(FileNotFoundError):
                tmp.unlink()

    @property
    def can_append(self) -> bool:
        return self.is_local

    def append_line(self, line: str) -> None:
        """Append one line and flush it to disk (filesystems only: see `can_append`)."""
        with open(self.path, "a") as f:
            f.write(line)
            f.flush()
            os.fsync(f.fileno())

    def unlink(self, missing_ok: bool = True) -> None:
        try:
            self.call(lambda: self.fs.delete_file(self.path))
        except FileNotFoundError:
            if not missing_ok:
                raise
        except OSError as e:
            if self.exists() or not missing_ok:
                raise StorageError(f"{self}: cannot be removed ({why_refused(e)})") from None


def _short(e: BaseException) -> str:
    return " ".join(str(e).split())[:300]


# What S3-compatible stores and the AWS SDK say when the request's credentials are missing or refused.
REFUSALS = (
    "ACCESS_DENIED",
    "AccessDenied",
    "INVALID_ACCESS_KEY_ID",
    "InvalidAccessKeyId",
    "SIGNATURE_DOES_NOT_MATCH",
    "SignatureDoesNotMatch",
    "EXPIRED_TOKEN",
    "ExpiredToken",
    "HTTP status 403",
    "credentials",
)


def why_refused(e: BaseException) -> str:
    """The store's error in one short line; when it refused the request's credentials, said so first."""
    text = _short(e)
    if any(word in text for word in REFUSALS):
        return (
            f"the object store refused access: check its credentials (AWS_ACCESS_KEY_ID and "
            f"AWS_SECRET_ACCESS_KEY, AWS_PROFILE, or ~/.aws/credentials) and their permissions; it said: {text}"
        )
    return text


def check_read_write(folder: Location) -> None:
    """Write a small probe object into `folder`, read it back, compare and remove it: a store that
    accepts a write it will not return (no or wrong credentials, a write-only key) is refused here,
    before any game is played, not after the last. StorageError saying what failed."""
    probe = folder / f".protolab-probe-{uuid.uuid4().hex[:12]}"
    token = uuid.uuid4().hex.encode()
    try:
        probe.write_atomic(token)
    except OSError as e:
        raise StorageError(f"cannot write {probe.name} ({why_refused(e)})") from None
    try:
        back = probe.read_bytes()
    except OSError as e:
        raise StorageError(f"wrote {probe.name} but cannot read it back ({why_refused(e)})") from None
    finally:
        with contextlib.suppress(OSError, StorageError):
            probe.unlink()
    if back != token:
        if folder.prefix == "s3://" and not s3_credentials():
            raise StorageError(
                f"no credentials for the object store: none of {', '.join(S3_CREDENTIALS)} is set "
                "and there is no ~/.aws/credentials or ~/.aws/config, so the requests went unsigned "
                f"(the store took {probe.name} but gave back {len(back)} other bytes); expected "
                "credentials with permission to write and read there"
            )
        raise StorageError(
            f"wrote {probe.name} but read back {len(back)} other bytes; expected the same bytes "
            "(check the store's endpoint and that its credentials may read what they write)"
        )


# Where the AWS SDK (pyarrow's S3) finds credentials, besides the instance's metadata service.
S3_CREDENTIALS = (
    "AWS_ACCESS_KEY_ID",
    "AWS_PROFILE",
    "AWS_WEB_IDENTITY_TOKEN_FILE",
    "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
    "AWS_CONTAINER_CREDENTIALS_FULL_URI",
)


def s3_credentials() -> bool:
    """Whether S3 credentials are configured here, in the environment or the shared files (a store
    that gives back other bytes than it took from a machine with none was sent unsigned requests)."""
    if any(os.environ.get(k) for k in S3_CREDENTIALS):
        return True
    files = [
        os.environ.get("AWS_SHARED_CREDENTIALS_FILE") or "~/.aws/credentials",
        os.environ.get("AWS_CONFIG_FILE") or "~/.aws/config",
    ]
    return any(os.path.isfile(os.path.expanduser(f)) for f in files)


def location(where: str | os.PathLike[str] | Location) -> Location:
    """The Location of a local path (relative paths stay relative in messages) or a URI."""
    if isinstance(where, Location):
        return where
    text = os.fspath(where)
    if not is_uri(text) or text.startswith("file://"):
        local = text.removeprefix("file://")
        return Location(pafs.LocalFileSystem(), os.path.abspath(local), local)
    base, _, query = text.partition("?")
    prefix = base.split("://", 1)[0] + "://"
    opened = _with_region(text)
    try:
        fs, path = bounded(text, lambda: pafs.FileSystem.from_uri(opened), _endpoint(prefix, f"?{query}"))
    except StorageError:
        raise
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, OSError, ValueError) as e:
        raise StorageError(
            f"{text}: cannot open this location ({_short(e)}); expected a local path or a URI that "
            "pyarrow.fs.FileSystem.from_uri resolves (s3://bucket/path, gs://bucket/path)"
        ) from None
    return Location(_with_timeouts(fs), path.rstrip("/"), base.rstrip("/"), prefix, f"?{query}" if query else "")


def _endpoint(prefix: str, query: str) -> str:
    """Which store a location talks to: its scheme and endpoint (the URI's endpoint_override, else
    AWS_ENDPOINT_URL, else the scheme's default)."""
    for part in query.lstrip("?").split("&"):
        key, _, value = part.partition("=")
        if key == "endpoint_override":
            return prefix + value
    return prefix + os.environ.get("AWS_ENDPOINT_URL", "")


def _with_region(uri: str) -> str:
    """An s3:// URI with the region of the environment (AWS_REGION, AWS_DEFAULT_REGION) added when
    it names none: pyarrow would otherwise ask the endpoint for the bucket's region, a request made
    before the time limits below can be set."""
    region = os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION")
    if not uri.startswith("s3://") or not region or "region=" in uri.partition("?")[2]:
        return uri
    return f"{uri}{'&' if '?' in uri else '?'}region={region}"


def _with_timeouts(fs: pafs.FileSystem) -> pafs.FileSystem:
    """An S3 filesystem whose connections and requests time out after the storage limit (pyarrow's
    default waits for ever on an endpoint that accepts and never answers); others as they are."""
    if not isinstance(fs, pafs.S3FileSystem):
        return fs
    rebuild, (options,) = fs.__reduce__()
    limit = storage_timeout()
    return rebuild({**options, "connect_timeout": limit, "request_timeout": limit})


def parquet_view(con: duckdb.DuckDBPyConnection, name: str, files: list[Location]) -> None:
    """A DuckDB view `name` over these Parquet files: DuckDB's own reader for local files, and for
    any other store an Arrow dataset over pyarrow's filesystem registered with DuckDB (no DuckDB
    extension is downloaded; projections and filters are pushed down into the Arrow scan)."""
    if all(f.is_local for f in files):
        listed = ", ".join("'" + str(f).replace("'", "''") + "'" for f in files)
        con.execute(f"create view {name} as select * from read_parquet([{listed}])")
        return
    import pyarrow.dataset as ds

    data = ds.dataset([f.path for f in files], filesystem=files[0].fs, format="parquet")
    con.register(f"{name}_arrow", data)
    con.execute(f"create view {name} as select * from {name}_arrow")
