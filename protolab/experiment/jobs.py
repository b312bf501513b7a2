"""Jobs on Ray, done one way for every feature: a run's shards (run/shardloop.py), a training's
example and ladder games (train/trainplay.py), a balance search's batches (tune/tuneplay.py),
`protolab power`'s pilot and `protolab bench --ray`. A card-value study is an ordinary run
(run/cardvalue.py), so its shards take the run's way.

`finished` is the engine. It submits calls of a Ray remote function with Ray's back-pressure idiom
(at most `max_pending` in flight, each argument built only when there is room for it), waits for
what has finished and yields it in batches. A call whose worker or node dies is Ray's to run again
(`remote`: MAX_RETRIES times; playing a job again gives the same result), an error in the job's own
code is not retried but named (JobFailed), and a local Ray that lost a process it cannot run
without ends the wait (RayBroken) instead of blocking for good. `Local` and `OnRay` put it behind
one `map`: results in job order, progress as jobs finish, the same results in this process as on
Ray. Starting, joining and ending the Ray session (and the reaper of a killed driver) is
session.py's."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, TypeVar

from protolab.experiment.progress import Progress
from protolab.experiment.session import CONNECT_TIMEOUT, local_ray_failure, raise_if_stopped, start_ray, stop_ray

MAX_RETRIES = 5  # per call, for workers or nodes that die (not for errors in code)
WAIT = 0.5  # seconds one ray.wait blocks, so that a stop or a broken Ray is seen
QUEUED = 32  # calls queued beyond twice the workers: fast jobs then finish in batches

K = TypeVar("K")


class RayBroken(RuntimeError):
    """The local Ray lost a process it cannot run without (`why`: which ones exited)."""

    def __init__(self, why: str):
        super().__init__(f"the local Ray stopped ({why} exited)")
        self.why = why


class JobFailed(RuntimeError):
    """A call failed for good: `key` is its job's key, `error` Ray's exception, `cause` the job's own
    exception (an error in its code or data), None when the call was lost (its worker or node died
    more than MAX_RETRIES times)."""

    def __init__(self, key: Any, error: BaseException, cause: BaseException | None):
        super().__init__(key, error)
        self.key, self.error, self.cause = key, error, cause


def remote(fn: Callable[[Any], Any], retries: int = MAX_RETRIES) -> Any:
    """`fn` as a Ray remote function on one CPU: run again when its worker dies, not when it raises
    (its process title is `ray::` and the function's name while it runs)."""
    import ray

    return ray.remote(num_cpus=1, max_retries=retries, retry_exceptions=False)(fn)


def in_flight(workers: int, exact: bool = False) -> int:
    """Calls in flight at once: the workers' worth running, as many again and QUEUED more waiting in
    Ray's queue, ready the moment a worker is free; `exact` (a cluster given its number of workers):
    the workers' worth."""
    return workers if exact else 2 * workers + QUEUED


def finished(
    fn: Any,
    calls: Iterable[tuple[K, Any]],
    max_pending: int,
    busy: int = 0,
    broken: Callable[[], str | None] | None = None,
) -> Iterator[list[tuple[K, Any]]]:
    """Submit `calls` ((key, argument), each taken from the iterable only when there is room) as
    calls of the Ray remote function `fn`, at most `max_pending` at a time; yield the finished ones
    as (key, result) in batches, an empty one every WAIT seconds without any. Each wait returns once
    all but `busy` pending calls (the workers' worth, kept running meanwhile) have finished, so a
    batch is as large as it can be without idling a worker. JobFailed names the first call of a
    batch that failed for good; RayBroken when `broken()` names a dead part of the local Ray."""
    import ray

    pending: dict[Any, K] = {}
    todo = iter(calls)
    while True:
        while len(pending) < max_pending:
            call = next(todo, None)
            if call is None:
                break
            key, arg = call
            pending[fn.remote(arg)] = key
        if not pending:
            return
        ready, _ = ray.wait(list(pending), num_returns=max(1, len(pending) - busy), timeout=WAIT)
        raise_if_stopped()
        why = broken() if broken is not None else None
        if why and not ready:
            raise RayBroken(why)
        results = _results(ready, pending)
        yield [(pending.pop(ref), result) for ref, result in zip(ready, results, strict=True)]


def _results(refs: list, pending: dict[Any, Any]) -> list:
    """The results of finished calls; JobFailed naming the one that failed."""
    import ray

    try:
        return ray.get(refs)
    except ray.exceptions.RayError:
        return [_result(ref, pending[ref]) for ref in refs]  # which one failed: its error says


def _result(ref: Any, key: Any) -> Any:
    import ray

    try:
        return ray.get(ref)
    except ray.exceptions.RayTaskError as e:
        raise JobFailed(key, e, e.cause) from None
    except ray.exceptions.RayError as e:
        raise JobFailed(key, e, None) from None


def _one(_job: Any) -> int:
    return 1


class _Mapper:
    """What Local and OnRay share behind `map`: the results in job order and the progress as jobs
    finish; each plays its jobs its own way (`_played`)."""

    workers: int
    where: str

    def map(
        self,
        fn: Callable[[Any], Any],
        jobs: Sequence[Any],
        progress: Progress | None = None,
        size: Callable[[Any], int] = _one,
    ) -> list[Any]:
        """fn of each job, in job order; `progress` counts `size(job)` (games) per finished job. A job
        that raises raises here, at once (on Ray with Ray's exception, its `cause` the job's own)."""
        out: list[Any] = [None] * len(jobs)
        done = 0
        for i, result in self._played(fn, jobs):
            out[i] = result
            done += size(jobs[i])
            if progress:
                progress.update(done)
        return out

    def _played(self, fn: Callable[[Any], Any], jobs: Sequence[Any]) -> Iterator[tuple[int, Any]]:
        """(index, fn of the job) of each job, as each finishes."""
        raise NotImplementedError


class Local(_Mapper):
    """Jobs played one after another in this process (tests, `--workers 1`)."""

    workers, where = 1, "this process (no Ray)"

    def _played(self, fn: Callable[[Any], Any], jobs: Sequence[Any]) -> Iterator[tuple[int, Any]]:
        for i, j in enumerate(jobs):
            yield i, fn(j)

    def close(self) -> None:
        pass


class OnRay(_Mapper):
    """Jobs played as Ray tasks (one CPU each, `in_flight(workers)` at a time) on a local Ray this
    starts or the cluster at `address`; results in job order, progress as they finish."""

    def __init__(self, address: str | None, workers: int | None, connect_timeout: float = CONNECT_TIMEOUT):
        self.workers, self.where = start_ray(address, workers, connect_timeout)
        self.remotes: dict[Callable, Any] = {}
        self.clean = True  # no map was left with calls in flight (a stop, a failure)

    def _played(self, fn: Callable[[Any], Any], jobs: Sequence[Any]) -> Iterator[tuple[int, Any]]:
        if fn not in self.remotes:
            self.remotes[fn] = remote(fn)
        pending = in_flight(self.workers)
        self.clean = False
        try:
            for batch in finished(self.remotes[fn], enumerate(jobs), pending, busy=pending, broken=local_ray_failure):
                yield from batch
        except JobFailed as e:
            raise e.error from None
        self.clean = True

    def close(self) -> None:
        stop_ray(clean=self.clean)
