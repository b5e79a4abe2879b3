"""The Monte Carlo against the exact expectation, hand-computed cases and the Llama 3 counts.

Statistical checks use fixed seeds and a tolerance of Z standard errors of the Monte Carlo mean.
Z = 4.5 makes a false alarm in any one check about 7e-6 likely, across the ~60 checks here < 1e-3.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import pdtr
from scipy.stats import poisson

from planner_gui.core import engine
from planner_gui.core.intervals import interval_parts, whole_interval_parts
from planner_gui.core.model import LLAMA3_DAYS, LLAMA3_GPUS, Scenario, llama3_components
from planner_gui.core.results import HOURS_KEYS, simulate

Z = 4.5


def assert_within_se(values: np.ndarray, expected: float, what: str) -> None:
    mean = float(np.mean(values))
    se = float(np.std(values, ddof=1) / np.sqrt(len(values)))
    assert abs(mean - expected) <= Z * se + 1e-12, f"{what}: MC {mean:.6g} vs exact {expected:.6g}, SE {se:.3g}"


def check_against_exact(sc: Scenario) -> None:
    res = simulate(sc)
    hours = res.hours_per_trial()
    exp_hours = res.expected.hours()
    for key in HOURS_KEYS:
        assert_within_se(hours[key] / sc.hours, exp_hours[key] / sc.hours, key)
    assert_within_se(res.trials.unplanned, res.expected.unplanned, "unplanned")
    assert_within_se(res.trials.planned, res.expected.planned, "planned")
    total = sum(hours.values())
    np.testing.assert_allclose(total, sc.hours, rtol=1e-9)


GRID = [
    # gpus, days, interval (min), write (s), detect, restart, planned/day, trials
    (1024, 54, 60.0, 5.0, 5, 5, 47 / 54, 2000),
    (16_384, 54, "optimal", 5.0, 5, 5, 47 / 54, 1000),
    (16_384, 54, 1.0, 0.0, 5, 5, 0.0, 1000),
    (16_384, 54, 180.0, 600.0, 10, 20, 2.0, 1000),
    (100_000, 54, "optimal", 60.0, 5, 5, 47 / 54, 500),
    (100_000, 30, 5.0, 1800.0, 1, 2, 0.0, 400),
    (1_000_000, 10, 1.0, 5.0, 0.5, 0.5, 5.0, 200),
    (1_000_000, 5, 240.0, 30.0, 0, 0, 0.0, 200),
    (4096, 365, 30.0, 120.0, 15, 45, 0.2, 500),
    # Mostly planned interruptions: rows with none at all, or only planned ones (planned-to-planned spacings).
    (8, 3, 30.0, 60.0, 5, 5, 1.0, 4000),
    (256, 20, 10.0, 30.0, 2, 30, 24.0, 1000),
]


@pytest.mark.parametrize("gpus,days,interval,write,detect,restart,planned,trials", GRID)
def test_monte_carlo_matches_exact(gpus, days, interval, write, detect, restart, planned, trials):
    sc = Scenario(gpus=gpus, days=float(days), checkpoint_interval_min=interval, checkpoint_write_s=write,
                  detect_min=detect, restart_min=restart, planned_per_day=planned, trials=trials, seed=7)
    check_against_exact(sc)


@pytest.mark.parametrize("mean", [1e-6, 0.02, 0.5, 3.0, 47.0, 2557.0, 130_000.0])
def test_poisson_inversion_gives_the_quantile(mean):
    """Each count is the smallest k with CDF(k) >= u, and counts never fall as the mean rises."""
    u = np.concatenate([engine._uniforms(np.random.default_rng(11), (3000,)), [1e-15, 0.5, 1 - 1e-15]])
    k = engine._poisson_by_inversion(u, mean)
    assert np.all(u <= pdtr(k, mean))
    assert np.all((k == 0) | (pdtr(k - 1, mean) < u))
    mid = (u > 1e-9) & (u < 1 - 1e-9)
    np.testing.assert_array_equal(k[mid], poisson.ppf(u[mid], mean))
    assert np.all(engine._poisson_by_inversion(u, mean * 1.01) >= k)


def test_split_windows_match_exact(monkeypatch):
    """Trials cut into many sub-windows (as for huge runs) still agree with the exact expectation."""
    monkeypatch.setattr(engine, "ROW_EVENT_CAP", 64)
    sc = Scenario(gpus=100_000, days=10.0, trials=300, seed=3, planned_per_day=6.0)
    assert engine.plan_layout(sc.failure_rate_per_hour * sc.hours, sc.trials).subwindows > 5
    check_against_exact(sc)


def test_no_interruptions_is_exact():
    sc = Scenario(components=llama3_components()[:1], planned_per_day=0.0, checkpoint_interval_min=60.0,
                  checkpoint_write_s=600.0, trials=20).scale_rates(0.0)
    res = simulate(sc)
    # Each trial enters the checkpoint cycle at a random phase: within one write of 60/70, exact on average.
    assert np.all(np.abs(res.goodput - 60 / 70) <= (10 / 60) / sc.hours + 1e-12)
    assert_within_se(res.goodput, 60 / 70, "goodput")
    assert res.trials.unplanned.sum() == 0 and res.trials.lost_work.max() < 1e-9


def test_whole_interval_by_hand():
    # 10 h interval: 1 h down, then 3 segments of 2 h compute + 1 h write fit exactly.
    g, down = np.array([10.0, 11.5, 11.5, 0.5]), np.array([1.0, 1.0, 1.0, 1.0])
    saved = np.array([False, False, True, False])
    dt, ut, wt, lt = whole_interval_parts(g, down, saved, 2.0, 1.0)
    np.testing.assert_allclose(dt, [1, 1, 1, 0.5])
    np.testing.assert_allclose(ut, [6, 6, 7.5, 0])  # the saved one keeps its 1.5 h in progress
    np.testing.assert_allclose(wt, [3, 3, 3, 0])
    np.testing.assert_allclose(lt, [0, 1.5, 0, 0])


def test_partial_window_by_hand():
    # Interval of 10 h (1 h down, segments [1,3) compute, [3,4) write, ...), window [2.5, 7.5].
    args = (np.array([10.0]), np.array([1.0]), np.array([False]))
    dt, ut, wt, lt = interval_parts(*args, np.array([2.5]), np.array([7.5]), 2.0, 1.0)
    # [2.5,3) compute 0.5, [3,4) write 1, [4,6) compute 2, [6,7) write 1, [7,7.5) compute 0.5
    np.testing.assert_allclose([dt[0], ut[0], wt[0], lt[0]], [0, 3.0, 2.0, 0])
    whole = whole_interval_parts(*args, 2.0, 1.0)
    full = interval_parts(*args, np.array([0.0]), np.array([10.0]), 2.0, 1.0)
    np.testing.assert_allclose(np.ravel(whole), np.ravel(full))


def test_calibrated_to_llama3_counts():
    """Per component, the mean count over trials matches Table 5 within sampling error."""
    import csv
    from importlib import resources

    text = resources.files("planner_gui.core").joinpath("data/llama3_table5.csv").read_text("utf-8")
    counts = {r["component"]: int(r["interruptions"]) for r in csv.DictReader(text.splitlines())}
    assert sum(counts.values()) == 419
    sc = Scenario(gpus=LLAMA3_GPUS, days=float(LLAMA3_DAYS), trials=4000, seed=11)
    res = simulate(sc)
    for i, comp in enumerate(sc.components):
        assert_within_se(res.trials.by_component[:, i], counts[comp.name], comp.name)
    np.testing.assert_array_equal(res.trials.by_component.sum(axis=1), res.trials.unplanned)
    assert_within_se(res.trials.unplanned, 419.0, "total")
    assert_within_se(res.trials.planned, 47.0, "planned")


def test_same_seed_same_numbers_and_other_seed_differs():
    a, b = simulate(Scenario(trials=200)), simulate(Scenario(trials=200))
    np.testing.assert_array_equal(a.goodput, b.goodput)
    np.testing.assert_array_equal(a.trials.by_component, b.trials.by_component)
    c = simulate(Scenario(trials=200, seed=1))
    assert not np.array_equal(a.goodput, c.goodput)


def test_cancel_between_chunks():
    calls = []

    def stop() -> bool:
        calls.append(1)
        return len(calls) > 1

    with pytest.raises(engine.Cancelled):
        simulate(Scenario(gpus=1_000_000, trials=200), should_stop=stop)
