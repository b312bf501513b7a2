"""The project as a cluster node installs it: the wheel `pip wheel .` builds, installed into a fresh
virtualenv, every command run from a folder outside the checkout (no source folder can stand in for
a file the wheel left out).

The fresh virtualenv holds the wheel alone; it reaches the dependencies (Ray, pandas, DuckDB, ...)
already installed for the test run through one path line, instead of installing a second copy of
them (a minute and a gigabyte a run). Those dependencies are the ones pyproject.toml declares, and
the path line adds a folder, not its .pth files: the editable install of the checkout there is not
seen. Built once per test session, whichever pytest worker asks first (a file lock)."""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
import time
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from filelock import FileLock

ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class Installed:
    """A virtualenv holding the wheel: its interpreter, its scripts and an environment to run them in."""

    venv: Path
    wheel: Path
    seconds: float  # what building and installing took (the first worker's figure)

    @property
    def bin(self) -> Path:
        return self.venv / "bin"

    @property
    def python(self) -> Path:
        return self.bin / "python"

    def env(self, **extra: str) -> dict[str, str]:
        """The caller's environment less anything that points at the checkout or the test's venv."""
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
        env["PATH"] = os.pathsep.join([str(self.bin), env.get("PATH", "")])
        env["RAY_USAGE_STATS_ENABLED"] = "0"
        return {**env, **extra}

    def run(
        self, *args: object, cwd: Path, timeout: float = 300, check: bool = True, env: dict[str, str] | None = None
    ) -> subprocess.CompletedProcess:
        """Run a script of the virtualenv (`protolab`, `ray`, `python`) in `cwd`."""
        exe = self.bin / str(args[0])
        r = subprocess.run(
            [str(exe), *map(str, args[1:])],
            cwd=cwd,
            env=env or self.env(),
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        if check and r.returncode != 0:
            raise AssertionError(f"{' '.join(map(str, args))} failed ({r.returncode}):\n{r.stdout}\n{r.stderr}")
        return r


def _sh(*args: object, cwd: Path | None = None, opt: str | None = None) -> None:
    """Run a build step without PYTHONPATH: a test that started a local Ray in this process put the
    checkout there (session.start_ray), and pip would then count the checkout as protolab installed.
    `opt`: the machine code's optimisation level (setup.py, PROTOLAB_OPT)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    if opt is not None:
        env["PROTOLAB_OPT"] = opt
    r = subprocess.run(list(map(str, args)), cwd=cwd, env=env, capture_output=True, text=True)
    if r.returncode != 0:
        raise AssertionError(f"{' '.join(map(str, args))} failed ({r.returncode}):\n{r.stdout}\n{r.stderr}")


def build(where: Path) -> Installed:
    """Build the wheel of the checkout into `where` and install it into `where/venv`."""
    t0 = time.monotonic()
    wheels = where / "wheels"
    # No build isolation: the build tools (Cython, setuptools, numpy) of this test run, as the test extra
    # installs them, instead of fetching them again. Compiled at -O1, half -O3's compile time: what the
    # wheel's tests prove (its files, its install, its commands and cluster runs) is the same at any level.
    _sh(
        *(sys.executable, "-m", "pip", "wheel", ROOT, "--no-deps", "--no-build-isolation", "-q", "-w", wheels),
        cwd=where,
        opt="1",
    )
    (wheel,) = wheels.glob("protolab-*.whl")
    venv = where / "venv"
    _sh(sys.executable, "-m", "venv", "--without-pip", venv, cwd=where)
    purelib = Path(
        subprocess.check_output(
            [venv / "bin" / "python", "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], text=True
        ).strip()
    )
    # From outside the checkout: run in its root, pip would count the editable install's metadata there
    # (protolab.egg-info, on the path as the working folder) as protolab already installed, and skip the wheel.
    _sh(
        sys.executable, "-m", "pip", "--python", venv / "bin" / "python", "install", "--no-deps", "-q", wheel, cwd=where
    )
    if not (purelib / "protolab" / "__init__.py").exists():
        raise AssertionError(f"pip did not install {wheel.name} into {venv}")
    # After the install, for the same reason: the test's dependencies hold the editable install's metadata.
    (purelib / "protolab_test_dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    _scripts(venv, "ray")
    return Installed(venv, wheel, time.monotonic() - t0)


def _scripts(venv: Path, dist: str) -> None:
    """The commands of dependency `dist` (`ray start`) in the virtualenv, run by its interpreter, as
    installing the dependency there would make them."""
    for ep in metadata.distribution(dist).entry_points:
        if ep.group == "console_scripts":
            script = venv / "bin" / ep.name
            script.write_text(
                f"#!{venv / 'bin' / 'python'}\nimport sys\nfrom {ep.module} import {ep.attr}\nsys.exit({ep.attr}())\n"
            )
            script.chmod(0o755)


def installed(shared: Path) -> Installed:
    """The session's wheel install in `shared` (a folder every pytest worker sees), built by the first
    worker that asks."""
    shared.mkdir(parents=True, exist_ok=True)
    done = shared / "seconds"
    with FileLock(str(shared / "lock")):
        if not done.exists():
            made = build(shared)
            done.write_text(f"{made.seconds:.1f}")
    (wheel,) = (shared / "wheels").glob("protolab-*.whl")
    return Installed(shared / "venv", wheel, float(done.read_text()))
