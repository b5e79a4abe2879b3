"""The per-trial summaries every report prints: their percentiles are numpy's, to the last bit."""

from __future__ import annotations

import numpy as np
import pytest

from planner_gui.core.analysis.summary import percentiles, summarize


@pytest.mark.parametrize("kind", ["normal", "ties", "wide", "nan"])
def test_the_percentiles_are_numpys_to_the_last_bit(kind):
    rng = np.random.default_rng(7)
    for n in [*range(1, 260), 1000, 1001, 4096]:
        if kind == "normal":
            v = rng.normal(size=n)
        elif kind == "ties":  # (counts of interruptions: few distinct values)
            v = rng.integers(0, 4, size=n).astype(float)
        elif kind == "wide":
            v = rng.exponential(size=n) * 10.0 ** rng.integers(-9, 9)
        else:
            v = rng.normal(size=n)
            v[rng.integers(0, n)] = np.nan
        got, want = percentiles(v), np.percentile(v, [5, 50, 95])
        assert np.array_equal(got, want, equal_nan=True), (n, got, want)


def test_a_summary_holds_the_mean_its_standard_error_and_the_percentiles():
    v = np.arange(1.0, 21.0)  # 1..20: the 5th percentile at index 0.95, the median at 9.5, the 95th at 18.05
    s = summarize(v)
    assert s.mean == 10.5 and s.sem == pytest.approx(np.std(v, ddof=1) / np.sqrt(20))
    assert (s.p05, s.p50, s.p95) == pytest.approx((1.95, 10.5, 19.05))
    one = summarize(np.array([3.0]))
    assert (one.mean, one.sem, one.p05, one.p50, one.p95) == (3.0, 0.0, 3.0, 3.0, 3.0)


def test_an_empty_sample_is_refused_as_numpy_refuses_it():
    with pytest.raises(IndexError):
        percentiles(np.array([]))
