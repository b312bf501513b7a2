"""The model's dense layer in C (strategies/_dense.pxi): every build this machine runs (AVX2 and the
baseline x86-64 build) gives, to the last bit, the sums of the plain loop (each output adds its
inputs' terms in input order, zeros skipped), so records do not depend on the CPU that played them."""

import numpy as np
import pytest
from strategies._learned import DENSE_BUILD, dense, dense_builds


def plain(w: np.ndarray, b: np.ndarray, x: np.ndarray) -> np.ndarray:
    """The reference: float32 products and sums, one input at a time in input order."""
    y = b.astype(np.float32).copy()
    for j in np.flatnonzero(x):
        y += w[:, j] * x[j]
    return y


SHAPES = [(1, 1), (2, 32), (2, 64), (3, 78), (31, 78), (32, 78), (33, 80), (63, 78), (64, 78), (64, 64), (40, 5)]


@pytest.mark.parametrize("build", dense_builds())
@pytest.mark.parametrize("shape", SHAPES)
def test_each_build_is_the_plain_loop_to_the_last_bit(build, shape):
    rng = np.random.default_rng(sum(shape))
    n, nin = shape
    w = (rng.standard_normal((n, nin)) * 10.0 ** rng.integers(-3, 3, (n, nin))).astype(np.float32)
    b = rng.standard_normal(n).astype(np.float32)
    for trial in range(20):
        x = rng.standard_normal(nin).astype(np.float32) * (rng.random(nin) < 0.4)
        got = dense(w, b, x, build)
        assert got.tobytes() == plain(w, b, x).tobytes(), (build, shape, trial)


def test_the_reference_tells_a_changed_order():
    """The check can fail: summing the same terms in another order changes the last bits."""
    rng = np.random.default_rng(7)
    w = (rng.standard_normal((64, 78)) * 10.0 ** rng.integers(-3, 3, (64, 78))).astype(np.float32)
    b = rng.standard_normal(64).astype(np.float32)
    x = rng.standard_normal(78).astype(np.float32)
    backwards = b.copy()
    for j in range(77, -1, -1):
        backwards += w[:, j] * x[j]
    assert dense(w, b, x).tobytes() != backwards.tobytes()


def test_the_build_in_use_and_bad_calls():
    assert DENSE_BUILD in dense_builds()
    assert "base" in dense_builds()
    with pytest.raises(ValueError, match="expected one of"):
        dense(np.ones((2, 2)), np.ones(2), np.ones(2), "neon")
    with pytest.raises(ValueError, match="bias 3"):
        dense(np.ones((2, 2)), np.ones(3), np.ones(2))
    with pytest.raises(ValueError, match="input 81"):
        dense(np.ones((2, 81)), np.ones(2), np.ones(81))
