"""Invariants that hold for every accepted input, checked by hypothesis over the whole accepted range.

Goodput is in [0, 1], every hours category is >= 0 and they add up to the window, in the exact
expectations and in every Monte Carlo trial, and the JSON report has only finite numbers. Rates
are drawn over all of [0, 1] per GPU-hour, from exactly 0 and the smallest subnormal number up, so
the formulas' limits (no failures, failures so rare that ``1/rate`` overflows) are covered.
Examples are sized (window, then GPUs) to at most ``EVENT_BUDGET`` interruptions, so the file runs
in seconds; ``derandomize`` makes the examples the same on every run.
"""

from __future__ import annotations

import json
import math
from unittest import mock

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from planner_gui.core.analysis.results import HOURS_KEYS, simulate
from planner_gui.core.files.scenario_io import validate
from planner_gui.core.model.scenario import OPTIMAL, Component, Scenario
from planner_gui.core.model.specs import LIMITS
from planner_gui.core.sim import engine
from planner_gui.core.sim.engine import simulate_intervals
from planner_gui.core.theory.exact import time_fractions
from planner_gui.core.theory.params import MAX_INTERVAL_MIN, MIN_INTERVAL_MIN, optimal_intervals, resolve

#: Expected interruptions in one example, over all its trials.
EVENT_BUDGET = 2e5
#: Sums of many per-spacing hours: rounding, relative to the window.
ROUNDING = 1e-9

SETTINGS = settings(deadline=None, derandomize=True, database=None, suppress_health_check=[HealthCheck.too_slow])

#: Values where the formulas have their limits or overflow: 1/5e-324 and 1/1e-310 are inf.
SPECIAL_RATES = [0.0, 5e-324, 1e-310, 1e-300, 1e-40, 1e-20, 1.0]


def log_uniform(lo: float, hi: float) -> st.SearchStrategy[float]:
    """Floats spread evenly over the decades from ``lo`` to ``hi`` (clipped to the range)."""
    return st.floats(math.log10(lo), math.log10(hi)).map(lambda e: min(max(10.0**e, lo), hi))


def zero_or(lo: float, hi: float) -> st.SearchStrategy[float]:
    return st.one_of(st.just(0.0), log_uniform(lo, hi))


RATE_HI = LIMITS["rate_per_gpu_hour"][1]
# Every decade down to the smallest subnormal, and more often the decades of real hardware (where
# windows hold many interruptions).
rates = st.one_of(st.sampled_from(SPECIAL_RATES), log_uniform(5e-324, RATE_HI), log_uniform(1e-9, RATE_HI))
# The accepted times (minutes, seconds) from 0 or their smallest value to their largest.
fixed_intervals = st.one_of(
    st.sampled_from([MIN_INTERVAL_MIN, MAX_INTERVAL_MIN]), log_uniform(MIN_INTERVAL_MIN, MAX_INTERVAL_MIN)
)
intervals = st.one_of(st.just(OPTIMAL), fixed_intervals)
writes = zero_or(1e-3, LIMITS["checkpoint_write_s"][1])
downtimes = zero_or(1e-3, LIMITS["detect_min"][1])


@st.composite
def scenarios(draw: st.DrawFn) -> Scenario:
    """A valid scenario anywhere in the accepted range, sized to ``EVENT_BUDGET`` interruptions."""
    comps = tuple(Component(f"c{i}", "GPU", draw(rates)) for i in range(draw(st.integers(1, 3))))
    sc = Scenario(
        name="hypothesis",
        gpus=int(draw(log_uniform(1, LIMITS["gpus"][1]))),
        days=draw(log_uniform(LIMITS["days"][0], LIMITS["days"][1])),
        components=comps,
        planned_per_day=draw(zero_or(1e-4, LIMITS["planned_per_day"][1])),
        checkpoint_interval_min=draw(intervals),
        checkpoint_write_s=draw(writes),
        detect_min=draw(downtimes),
        restart_min=draw(downtimes),
        trials=draw(st.integers(1, 20)),
        seed=draw(st.integers(0, 2**63 - 1)),
    )

    def events(s: Scenario) -> float:
        return (s.failure_rate_per_hour + s.planned_per_day / 24.0) * s.hours * s.trials

    # Too big: shorten the window, then take fewer GPUs. One GPU for the shortest window (0.24 h) has
    # at most 20 trials x (10 planned + 3 components x 0.24 unplanned) interruptions.
    if events(sc) > EVENT_BUDGET:
        sc = sc.replace(days=max(LIMITS["days"][0], sc.days * EVENT_BUDGET / events(sc)))
    if events(sc) > EVENT_BUDGET:
        per_gpu_hour = sc.rate_per_gpu_hour * sc.hours * sc.trials
        sc = sc.replace(gpus=max(1, int((EVENT_BUDGET - events(sc.replace(gpus=0))) / per_gpu_hour)))
    assert events(sc) <= EVENT_BUDGET * (1 + 1e-9)
    return validate(sc)


def check_fractions(parts: list[np.ndarray], what: str) -> None:
    for key, part in zip(HOURS_KEYS, parts):
        assert np.all((part >= 0) & (part <= 1)), f"{what}: {key} = {part}"
    np.testing.assert_allclose(sum(parts), 1.0, rtol=0, atol=1e-12, err_msg=what)


def check_trials(hours_per_trial: dict[str, np.ndarray], window: float, what: str) -> None:
    for key, h in hours_per_trial.items():
        assert np.all((h >= 0) & (h <= window)), f"{what}: {key} from {h.min()} to {h.max()} of {window} h"
    goodput = hours_per_trial["useful"] / window
    assert np.all((goodput >= 0) & (goodput <= 1)), f"{what}: goodput {goodput}"
    np.testing.assert_allclose(sum(hours_per_trial.values()), window, rtol=ROUNDING, err_msg=what)


@given(
    lam=st.one_of(
        st.sampled_from(SPECIAL_RATES),
        log_uniform(5e-324, RATE_HI * LIMITS["gpus"][1]),
        log_uniform(1e-6, RATE_HI * LIMITS["gpus"][1]),
    ),
    mu=zero_or(1e-300, LIMITS["planned_per_day"][1] / 24.0),
    tau_min=fixed_intervals,
    write_s=writes,
    detect_min=downtimes,
    restart_min=downtimes,
)
@settings(SETTINGS, max_examples=1500)
def test_exact_fractions_are_shares_of_the_window(lam, mu, tau_min, write_s, detect_min, restart_min):
    """Each fraction is in [0, 1] and they add up to 1: each has its own closed form, so the sum is a check."""
    f = time_fractions(lam, mu, tau_min / 60.0, write_s / 3600.0, (detect_min + restart_min) / 60.0, restart_min / 60.0)
    check_fractions([f.useful, f.checkpoint, f.lost_work, f.recovery, f.planned], "exact")


@given(sc=scenarios())
@settings(SETTINGS, max_examples=300)
def test_every_trial_splits_its_window_and_the_report_is_finite(sc):
    res = simulate(sc)
    check_trials(res.hours_per_trial(), sc.hours, "Monte Carlo")
    f = res.expected.fractions
    check_fractions([f.useful, f.checkpoint, f.lost_work, f.recovery, f.planned], "exact")
    for value in (*res.optimal.to_dict().values(), res.interval_min):
        assert MIN_INTERVAL_MIN <= value <= MAX_INTERVAL_MIN
    json.dumps(res.to_json_dict(), allow_nan=False)  # inf or nan anywhere raises


@given(sc=scenarios(), taus_min=st.lists(fixed_intervals, min_size=1, max_size=3))
@settings(SETTINGS, max_examples=100)
def test_several_intervals_on_shared_draws_split_the_window(sc, taus_min):
    """The interval sweep's path: every interval on one set of draws (the edges differ per interval)."""
    params, _ = resolve(sc, optimal_intervals(sc))
    for tau, raw in zip(taus_min, simulate_intervals(sc, params, np.array(taus_min) / 60.0, components=False)):
        hours = dict(zip(HOURS_KEYS, (raw.useful, raw.checkpoint, raw.lost_work, raw.recovery, raw.planned_restart)))
        check_trials(hours, sc.hours, f"interval {tau} min")


@given(sc=scenarios())
@settings(SETTINGS, max_examples=60)
def test_trials_cut_into_many_sub_windows_split_their_window(sc):
    """Spacings joined across many sub-window edges (as in huge runs) still fill each window exactly."""
    with mock.patch.object(engine, "ROW_EVENT_CAP", 64):
        res = simulate(sc)
    check_trials(res.hours_per_trial(), sc.hours, "sub-windows")


def test_cli_report_for_a_practically_unfailing_gpu(capsys):
    """Issue 8: one GPU with a 1e40-hour MTBF reported goodput 4e21 % and negative lost GPU-hours."""
    from planner_gui.cli import main

    assert main(["run", "--planned-per-day", "0", "--gpu-mtbf-hours", "1e40", "--gpus", "1", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    for key in ("mean", "p05", "p50", "p95"):
        assert 0 <= report["goodput"][key] <= 1, report["goodput"]
        assert report["lost_gpu_hours"][key] >= 0, report["lost_gpu_hours"]
    assert 0 <= report["goodput_expected"] <= 1
    assert all(v >= 0 for v in report["hours"].values()), report["hours"]
    assert sum(report["hours"].values()) == pytest.approx(report["scenario"]["days"] * 24.0, rel=ROUNDING)
