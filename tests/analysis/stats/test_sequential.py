"""The stopping rule keeps its promise however often one looks; the naive peek does not; the sample
sizes the lab quotes deliver the power they claim. Simulated A/Bs, seeded, so every figure repeats."""

import numpy as np
import pytest

from analysis.stats.power import detectable, games_needed, spread
from analysis.stats.proportions import z_for
from analysis.stats.sequential import confidence_sequence, first_exclusion, watch

SIMS, BATCH, LOOKS = 1000, 100, 30
# A paired design's differences: most seeds play the same in both arms.
VALUES = np.array([-1.0, -0.5, 0.0, 0.5, 1.0])
SAME = np.array([0.15, 0.05, 0.6, 0.05, 0.15])


def draws(rng: np.random.Generator, shape, shift: float = 0.0) -> np.ndarray:
    """Differences with mean `shift` (moving mass from -1 to +1 keeps them in [-1, 1])."""
    p = SAME.copy()
    p[0] -= shift / 2
    p[4] += shift / 2
    return rng.choice(VALUES, size=shape, p=p)


def naive_peeks(d: np.ndarray, looks: np.ndarray) -> np.ndarray:
    """A fixed-size 95% normal interval, recomputed at every look as if each were the last."""
    n = np.arange(1, d.shape[-1] + 1)
    mean = np.cumsum(d, axis=-1) / n
    sd = np.sqrt(np.maximum(np.cumsum(d * d, axis=-1) / n - mean**2, 1e-12) * n / np.maximum(n - 1, 1))
    half = 1.96 * sd / np.sqrt(n)
    return first_exclusion(mean - half, mean + half, looks)


def test_identical_arms_watched_after_every_batch_stay_within_five_percent():
    d = draws(np.random.default_rng(2026), (SIMS, BATCH * LOOKS))
    looks = np.arange(BATCH, BATCH * LOOKS + 1, BATCH) - 1
    seq = confidence_sequence(d)
    anytime = first_exclusion(seq.low, seq.high, looks).mean()
    naive = naive_peeks(d, looks).mean()
    assert anytime <= 0.05, anytime
    assert naive > 0.15, naive  # peeking at a fixed-size test inflates its 5% several-fold
    assert naive > 3 * max(anytime, 0.01)


def test_a_real_effect_is_settled_early_with_its_sign():
    rng = np.random.default_rng(7)
    for shift in (0.1, -0.1):
        stop = watch(draws(rng, 20_000, shift), batch=BATCH)
        assert stop.reason == "excludes"
        assert stop.games < 20_000
        assert (stop.low > 0) if shift > 0 else (stop.high < 0)
        assert stop.low <= shift <= stop.high


def test_no_effect_is_settled_as_within_a_margin_or_runs_to_its_cap():
    d = draws(np.random.default_rng(11), 20_000)
    within = watch(d, batch=BATCH, margin=0.05)
    assert within.reason == "within" and -0.05 < within.low <= within.high < 0.05
    capped = watch(d[:300], batch=BATCH)
    assert capped.reason == "budget" and capped.games == 300 and capped.looks == 3


def test_the_sequence_narrows_and_holds_its_centre():
    seq = confidence_sequence(draws(np.random.default_rng(3), 5000, 0.05))
    assert np.all(np.diff(seq.low) >= 0) and np.all(np.diff(seq.high) <= 0)
    assert np.all(seq.low <= seq.centre) and np.all(seq.centre <= seq.high)
    assert seq.high[-1] - seq.low[-1] < 0.1 < seq.high[99] - seq.low[99]


def test_a_constant_stream_is_not_mistaken_for_an_effect():
    seq = confidence_sequence(np.zeros(10_000))
    assert seq.low[-1] <= 0 <= seq.high[-1] and seq.high[-1] - seq.low[-1] < 0.01


@pytest.mark.parametrize(
    "d, alpha, message",
    [
        ([0.0, 1.5], 0.05, "lie in [-1, 1]"),
        ([0.0, float("nan")], 0.05, "finite"),
        ([0.0, 1.0], 1.0, "alpha"),
    ],
)
def test_bad_input_is_refused_by_name(d, alpha, message):
    with pytest.raises(ValueError, match=message.replace("[", r"\[").replace("]", r"\]")):
        confidence_sequence(np.array(d), alpha)


def test_watch_refuses_a_bad_batch_or_margin():
    with pytest.raises(ValueError, match="batch"):
        watch(np.zeros(10), batch=0)
    with pytest.raises(ValueError, match="margin"):
        watch(np.zeros(10), batch=5, margin=-0.1)


def test_games_needed_delivers_its_power():
    """At the size quoted for 80% power, a fixed-size test of that effect rejects about 80% of the time."""
    rng = np.random.default_rng(5)
    shift = 0.04
    sd = spread(draws(rng, 50_000, shift))
    n = games_needed(sd, shift)
    d = draws(rng, (2000, n), shift)
    z = d.mean(axis=1) / (d.std(axis=1, ddof=1) / np.sqrt(n))
    power = np.mean(np.abs(z) > z_for(0.95))
    assert 0.75 <= power <= 0.85, (n, power)


def test_detectable_inverts_games_needed():
    n = games_needed(0.6, 0.03)
    assert detectable(0.6, n) <= 0.03 < detectable(0.6, n - 1)
    assert detectable(0.6, 4 * n) == pytest.approx(detectable(0.6, n) / 2)
    with pytest.raises(ValueError, match="effect of 0"):
        games_needed(0.6, 0.0)
