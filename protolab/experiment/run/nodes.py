"""Which node of a cluster plays each shard, and which nodes a run lost.

A shard task notes in the cluster's key-value store (Ray's GCS) the node it starts on; while the
driver waits it reads Ray's node table, and when a node leaves it names the node and the shards
that were running there in one line and in run.json (Ray plays those shards again on the nodes
left: shardloop.MAX_RETRIES). Ray's own account of the loss stays in Ray's log files, which the
line names: a user reads what protolab says, not a raylet's state dump."""

from __future__ import annotations

import socket
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

NAMESPACE = b"protolab"
POLL = 2.0  # seconds between two reads of the node table (one GCS call)
SETTLE = 20.0  # seconds the last look waits for Ray to declare gone a node that lost a shard


def session_key(run_id: str, token: str) -> str:
    """The marks of one session of a run (a resumed run starts afresh)."""
    return f"{run_id}.{token[:12]}"


def _key(session: str, first_shard: int, node_id: str) -> bytes:
    return f"{session}/{first_shard}/{node_id}".encode()


def here() -> dict[str, str]:
    """This process's node: Ray's node id, the host's name and the node's address."""
    import ray

    if not ray.is_initialized():
        return {"node": socket.gethostname(), "node_id": "", "host": socket.gethostname()}
    return {
        "node": ray.util.get_node_ip_address(),  # type: ignore[no-untyped-call]
        "node_id": ray.get_runtime_context().get_node_id(),
        "host": socket.gethostname(),
    }


def mark_started(session: str, first_shard: int) -> None:
    """In a shard task: this group of shards (named by its first shard) has started on this node.
    Informative only: a store that cannot be written to never fails the shard."""
    from ray.experimental import internal_kv

    try:
        node_id = here()["node_id"]
        if node_id:
            internal_kv._internal_kv_put(_key(session, first_shard, node_id), b"", namespace=NAMESPACE)
    except Exception:  # noqa: BLE001 - the mark only explains a loss; playing the shard matters
        pass


@dataclass(frozen=True)
class Loss:
    """A node that left the cluster mid-run (`left`), or a worker process of a node that stayed,
    and the shards that had started there and were played again elsewhere."""

    node_id: str
    host: str
    ip: str
    seconds: float  # into this session, when protolab saw it
    shards: list[int]
    left: bool

    def line(self, logs: str) -> str:
        node = f"node {self.node_id[:12]} ({self.host}, {self.ip})"
        if not self.shards:
            which = "no shard was running there"
        elif len(self.shards) == 1:
            which = f"shard {self.shards[0]} was running there and is played again"
        else:
            which = f"shards {', '.join(map(str, self.shards))} were running there and are played again"
        what = f"{node} left the cluster" if self.left else f"a worker process on {node} died"
        return f"{what} {self.seconds:.0f} s into the run; {which} (Ray's account of it: {logs})"

    def record(self) -> dict[str, Any]:
        return asdict(self)


def logs_dir() -> str:
    """Where this Ray session keeps its log files (this machine's, on a cluster the head's)."""
    import ray

    node = getattr(ray._private.worker, "_global_node", None)
    try:
        return str(node.get_logs_dir_path()) if node is not None else "/tmp/ray/session_latest/logs"
    except Exception:  # noqa: BLE001 - only named in a message
        return "/tmp/ray/session_latest/logs"


class NodeWatch:
    """The driver's view of the cluster's nodes during one session of a run: the groups of shards it
    submitted (by first shard), the nodes alive when it began, and the losses already told."""

    def __init__(self, session: str):
        import ray

        self.session, self.t0, self.last = session, time.monotonic(), 0.0
        self.alive = {n["NodeID"]: n for n in ray.nodes() if n.get("Alive")}  # type: ignore[no-untyped-call]
        self.groups: dict[int, list[int]] = {}
        self.told: set[str] = set()

    def submitted(self, shards: Sequence[int]) -> None:
        self.groups[shards[0]] = list(shards)

    def lost(self, finished_on: Callable[[int], str | None], final: bool = False) -> list[Loss]:
        """What was lost since the last look, at most every POLL seconds: nodes gone from Ray's node
        table, each with the shards that had started on it and not finished there (`finished_on`:
        the node id a recorded shard ran on, None while it is not recorded). The `final` look, once
        every shard is in, also names the nodes where a shard started but that did not finish it
        (a node Ray had not yet declared gone when the run ended, or a worker process that died),
        waiting up to SETTLE seconds for Ray's verdict on such a node."""
        if not final and time.monotonic() - self.last < POLL:
            return []
        self.last = time.monotonic()
        started = self._started()
        gone = self._gone()
        suspects = set(gone)
        if final:
            retried = {
                node for node, firsts in started.items() if any(finished_on(f) not in (None, node) for f in firsts)
            }
            deadline = time.monotonic() + SETTLE
            while retried - gone - self.told and time.monotonic() < deadline:
                time.sleep(0.5)
                gone = self._gone()
            suspects |= retried
        losses = []
        for node_id in sorted(suspects - self.told):
            self.told.add(node_id)
            info = self.alive.get(node_id, {})
            firsts = sorted(f for f in started.get(node_id, ()) if finished_on(f) != node_id)
            losses.append(
                Loss(
                    node_id,
                    info.get("NodeManagerHostname", "?"),
                    info.get("NodeManagerAddress", "?"),
                    round(time.monotonic() - self.t0, 1),
                    [i for f in firsts for i in self.groups[f]],
                    node_id in gone,
                )
            )
        return losses

    def _gone(self) -> set[str]:
        """The nodes alive at the start that Ray's node table no longer has alive."""
        import ray

        now_alive = {n["NodeID"] for n in ray.nodes() if n.get("Alive")}  # type: ignore[no-untyped-call]
        return set(self.alive) - now_alive

    def _started(self) -> dict[str, set[int]]:
        """The node ids this session's groups started on (first shard of each group), from the marks."""
        from ray.experimental import internal_kv

        started: dict[str, set[int]] = {}
        for key in internal_kv._internal_kv_list(f"{self.session}/".encode(), namespace=NAMESPACE) or []:
            _, first, node_id = key.decode().split("/")
            if int(first) in self.groups:
                started.setdefault(node_id, set()).add(int(first))
        return started

    def forget(self) -> None:
        """Remove this run's marks from the cluster's store (the end of the session)."""
        from ray.experimental import internal_kv

        try:
            internal_kv._internal_kv_del(f"{self.session}/".encode(), del_by_prefix=True, namespace=NAMESPACE)
        except Exception:  # noqa: BLE001 - marks are a few bytes; a store already gone keeps none
            pass
