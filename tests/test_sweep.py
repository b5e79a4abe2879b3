"""Sweeps: the GPU grid, agreement with the exact curve, common random numbers, CSV."""

from __future__ import annotations

import csv
import io

import numpy as np

from planner_gui.core.model import Scenario
from planner_gui.core.results import simulate
from planner_gui.core.sweep import gpu_counts, interval_points, sweep_gpus, sweep_interval


def test_gpu_grid():
    xs = gpu_counts(41)
    assert xs[0] == 1024 and xs[-1] == 1_048_576
    assert 16_384 in xs and 100_000 in xs
    assert len(xs) == 41 and np.all(np.diff(xs) > 0)


def test_gpu_sweep_matches_exact_and_points_match_single_runs():
    sc = Scenario(trials=300)
    xs = np.array([1024, 16_384, 100_000, 400_000])
    res = sweep_gpus(sc, xs)
    z = np.abs(res.goodput_mean - res.goodput_expected) / res.goodput_sem
    assert np.all(z < 4.5), z
    np.testing.assert_allclose(res.interruptions_expected, [sc.replace(gpus=int(n)).failure_rate_per_hour * sc.hours
                                                            for n in xs])
    assert np.all(np.diff(res.interruptions_mean) > 0)
    assert np.all(res.goodput_p05 <= res.goodput_mean) and np.all(res.goodput_mean <= res.goodput_p95)


def test_interval_sweep_uses_common_random_numbers():
    """Moving only the interval keeps the same random draws: the MC error barely changes between points."""
    sc = Scenario(trials=200)
    xs = interval_points(21, 2.0, 20.0)
    res = sweep_interval(sc, xs)
    err = res.goodput_mean - res.goodput_expected
    # Independent draws would make adjacent errors differ by about sqrt(2) SE (RMS); common ones by far less.
    rms = np.sqrt(np.mean(np.diff(err) ** 2))
    assert rms < 0.5 * np.mean(res.goodput_sem), (rms, np.mean(res.goodput_sem))
    # Interruption counts do not depend on the interval at all with shared draws.
    assert np.ptp(res.interruptions_mean) == 0


def test_gpu_sweep_is_smooth():
    sc = Scenario(trials=200)
    res = sweep_gpus(sc, np.arange(16_000, 16_800, 100))
    err = res.goodput_mean - res.goodput_expected
    rms = np.sqrt(np.mean(np.diff(err) ** 2))
    assert rms < 0.5 * np.mean(res.goodput_sem), (rms, np.mean(res.goodput_sem))


def test_same_seed_same_sweep_and_csv():
    sc = Scenario(trials=50)
    a = sweep_interval(sc, [5.0, 50.0])
    b = sweep_interval(sc, [5.0, 50.0])
    assert a.to_csv() == b.to_csv()
    rows = list(csv.DictReader(io.StringIO(a.to_csv())))
    assert len(rows) == 2 and float(rows[1]["checkpoint_interval_min"]) == 50.0
    single = simulate(sc.replace(checkpoint_interval_min=50.0))
    assert float(rows[1]["goodput_expected"]) == single.expected.goodput


def test_plan_exact_curve_passes_through_the_interval_sweep_and_peaks_at_the_exact_optimum():
    from planner_gui.core.plan import PREVIEW, PlanRequest, compute_plan

    res = compute_plan(PlanRequest(Scenario(gpus=100_000, trials=50), PREVIEW))
    x, exact = res.exact_curve
    step = (len(x) - 1) // (len(res.by_interval.x) - 1)
    np.testing.assert_allclose(x[::step], res.by_interval.x, rtol=1e-12)
    np.testing.assert_allclose(exact[::step], res.by_interval.goodput_expected, rtol=1e-12)
    i = int(np.argmax(exact))
    assert x[i - 1] <= res.main.optimal.exact <= x[i + 1]
