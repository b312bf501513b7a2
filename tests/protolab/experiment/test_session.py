"""One local Ray kept across experiments (keep_local_ray): reused while whole and large enough, ended
by an experiment that did not end cleanly, by leaving the block, and by the next experiment outside
any block. One test, because each step needs the Ray the step before left (three starts in all)."""

from __future__ import annotations

import pytest
import ray

from protolab.experiment.session import keep_local_ray, local_ray, start_ray, stop_ray


@pytest.mark.slow
def test_a_kept_local_ray_serves_clean_experiments_only_and_only_inside():
    stop_ray()  # the one an earlier test of this process may have left running (tests/conftest.py)
    with keep_local_ray(2):
        with keep_local_ray(1):  # blocks nest: leaving the inner one keeps the outer one's Ray
            start_ray(None, 1)
            kept = local_ray()
            assert kept is not None and kept.cpus == 2  # the outer block's size
            stop_ray(clean=True)
        assert ray.is_initialized() and local_ray() is kept
        start_ray(None, 1)
        assert local_ray() is kept
        stop_ray(clean=True)  # a complete experiment: kept for the next
        assert ray.is_initialized() and local_ray() is kept and kept.root.exists()
        assert start_ray(None, 2)[0] == 2 and local_ray() is kept
        stop_ray(clean=False)  # a stopped or failed one: ended, so that nothing of it runs on
        assert not ray.is_initialized() and local_ray() is None and not kept.root.exists()
    with keep_local_ray(2, end=False):
        start_ray(None, 3)  # more workers than a kept Ray would have: one that large
        left = local_ray()
        assert left is not None and left.cpus == 3
        stop_ray(clean=True)
    assert local_ray() is left and ray.is_initialized()  # end=False: left running on leaving
    start_ray(None, 1)  # outside any block: its own Ray, as if none had been kept
    own = local_ray()
    assert own is not None and own.root != left.root and own.cpus == 1 and not left.root.exists()
    stop_ray(clean=True)  # outside: clean or not, its Ray ends with it
    assert local_ray() is None and not own.root.exists()


def test_a_stop_while_the_reaper_starts_leaves_no_session_folder(monkeypatch):
    """The session's private folder exists before its watcher does: a Ctrl-C in between removes it
    (nobody else knows of it), where it was left behind empty."""
    import shutil
    import tempfile
    from pathlib import Path

    from protolab.experiment import reaper

    stop_ray()
    short = Path(tempfile.mkdtemp(prefix="pl-", dir="/tmp"))  # a short temp dir: private_root uses it
    monkeypatch.setattr(tempfile, "tempdir", str(short))

    def stopped(root):
        assert Path(root).parent == short and Path(root).is_dir()
        raise KeyboardInterrupt

    monkeypatch.setattr(reaper, "Watcher", stopped)
    try:
        with pytest.raises(KeyboardInterrupt):
            start_ray(None, 1)
        assert list(short.iterdir()) == [] and local_ray() is None
    finally:
        shutil.rmtree(short, ignore_errors=True)


def test_a_stop_cut_short_removes_the_session_folder_too(tmp_path, monkeypatch):
    """StopDeadline's last act (session._sweep_now, before os._exit) ends the local Ray's processes and
    removes its folder: a watcher already told the driver was done would not."""
    from types import SimpleNamespace

    from protolab.experiment import session

    root = tmp_path / "protolab-ray-session-x"
    (root / "session_latest").mkdir(parents=True)
    fake = session.LocalRay(root, SimpleNamespace(proc=SimpleNamespace(pid=-1)), 1)
    monkeypatch.setattr(session, "_local", fake)
    session._sweep_now()
    assert not root.exists()
