"""Shared fixtures: the official pool is compiled once per test session."""

import os

import pytest

os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")


@pytest.fixture(scope="session")
def pool():
    from sim.pool import load_pool

    return load_pool()
