"""The command's last moments (protolab/process.py): a Ctrl-C while the output drains is still said,
and Ray's own exit function, failing after a stop cut `import ray` short, adds nothing to the stop's
one line. Real processes: each case is a Python that ends through protolab's exit."""

import subprocess
import sys

import pytest

FLUSH_GETS_CTRL_C = """
import os, signal, sys
import protolab.process as p

class Draining:
    '''stdout whose first flush takes a Ctrl-C, as when the signal lands while the output drains'''
    def __init__(self, out):
        self.out, self.sent = out, False
    def write(self, text):
        return self.out.write(text)
    def flush(self):
        if not self.sent:
            self.sent = True
            os.kill(os.getpid(), signal.SIGINT)
        self.out.flush()

sys.stdout = Draining(sys.stdout)
print("the command's output")
p._exit(0)
"""

RAY_EXIT_FAILS = """
import atexit, sys
import protolab.process as p
from protolab.experiment.stopnote import request_stop

def shutdown():  # what Ray's atexit hook raises when `import ray` was cut short
    raise AttributeError("partially initialized module 'ray' has no attribute '_private'")

shutdown.__module__ = "ray._private.worker"
atexit.register(shutdown)
sys.unraisablehook = p._unraisable
if sys.argv[1] == "stopped":
    request_stop(2)
    print("protolab: interrupted", file=sys.stderr)
p._exit(130 if sys.argv[1] == "stopped" else 0)
"""


def python(code: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=60)


def test_a_ctrl_c_while_the_output_drains_is_said_and_exits_130():
    r = python(FLUSH_GETS_CTRL_C)
    assert r.stdout == "the command's output\n"
    assert r.returncode == 130 and r.stderr == "protolab: interrupted\n", (r.returncode, r.stderr)


@pytest.mark.parametrize("how", ["stopped", "finished"])
def test_rays_exit_function_after_a_cut_import_is_quiet_only_after_a_stop(how):
    r = python(RAY_EXIT_FAILS, how)
    if how == "stopped":
        assert r.returncode == 130 and r.stderr == "protolab: interrupted\n", r.stderr
    else:  # no stop: a failing exit function is reported as Python reports it
        assert r.returncode == 0 and "Exception ignored" in r.stderr and "partially initialized" in r.stderr
