"""The window's plan (planner_gui.core.plan): a preview fits a time budget without changing what it stands for."""

from __future__ import annotations

import math

import numpy as np
import pytest

from planner_gui.core.plan import FULL, PREVIEW, PlanRequest, compute_plan
from planner_gui.core.scenario_io import load_preset

Z = 4.0  # tolerance in standard errors


@pytest.fixture(scope="module")
def huge():
    """A scenario a preview cannot simulate whole in its budget: a year at a million GPUs."""
    return load_preset("llama3-405b").replace(gpus=1_000_000, days=365.0)


@pytest.fixture(scope="module")
def preview(huge):
    return compute_plan(PlanRequest(huge, PREVIEW))


def test_a_preview_of_a_huge_run_simulates_part_of_the_window(preview, huge):
    assert 0.0 < preview.window_fraction < 1.0
    # It still describes the whole window: the scenario, its hours, the expectations.
    assert preview.main.scenario.days == huge.days
    assert preview.main.expected.hours_window == pytest.approx(huge.hours)


def test_a_scaled_preview_agrees_with_the_exact_expectation(preview, huge):
    """Mean goodput and interruptions of the scaled-up part agree with the whole window's exact values;
    the standard error is that of the part simulated (the spread before it was narrowed)."""
    res, f = preview.main, preview.window_fraction
    n = res.scenario.trials
    g = res.goodput
    se = float(np.std(g, ddof=1)) / math.sqrt(f) / math.sqrt(n)
    assert abs(g.mean() - res.expected.goodput) < Z * se + 1e-12
    counts = res.trials.unplanned
    expected = res.expected.unplanned
    se_n = max(float(np.std(counts, ddof=1)) / math.sqrt(f), math.sqrt(expected * f) / f) / math.sqrt(n)
    assert abs(counts.mean() - expected) < Z * se_n
    # The scaled spread is about the whole window's: Poisson counts have a standard deviation sqrt(mean).
    assert float(np.std(counts, ddof=1)) == pytest.approx(math.sqrt(expected), rel=0.5)


def test_a_preview_of_a_general_run_keeps_its_trials_and_agrees_with_the_full_run():
    """The general engine (here: a persistent stall beside the fast tier) pays per step, not per trial: its preview
    keeps the trials and shortens the window instead (8 trials over a sliver of it showed 4.6 % for 2.0 %), and
    its mean agrees with a full run within their standard errors. The vectorized engine's preview still trades
    trials first."""
    from planner_gui.core.model import Tiers
    from planner_gui.core.results import simulate

    sc = load_preset("llama3-405b").replace(
        gpus=1_048_576, tiers=Tiers(fast_enabled=True, fast_placement="same-domain")
    )
    assert sc.write_s > 0
    res = compute_plan(PlanRequest(sc, PREVIEW))
    f, g = res.window_fraction, res.main.goodput
    assert f < 0.01 and res.main.scenario.trials == PREVIEW.max_trials
    full = simulate(sc.replace(days=5.0, trials=100)).goodput  # (the mean does not depend on the window's length)
    se = math.sqrt(float(np.var(g, ddof=1)) / f / len(g) + float(np.var(full, ddof=1)) / len(full))
    assert abs(g.mean() - full.mean()) < Z * se
    from planner_gui.ui.main_window import _run_text

    assert f"(each trial {100 * f:.1f}% of it, scaled up)" in _run_text(res)  # (it said 0%)
    # (no planned interruption meeting a restore: the vectorized engine's domain, docs/model.md 4)
    vectorized = compute_plan(PlanRequest(sc.replace(checkpoint_write_s=0.0, planned_per_day=0.0), PREVIEW))
    assert vectorized.main.engine == "tiers"
    assert vectorized.main.scenario.trials < PREVIEW.max_trials


def test_the_gpu_sweep_of_a_scaled_preview_agrees_with_the_exact_curve(preview):
    s = preview.by_gpus
    ok = s.interruptions_expected > 0
    rel = np.abs(s.interruptions_mean[ok] - s.interruptions_expected[ok]) / s.interruptions_expected[ok]
    assert rel.max() < 0.05


@pytest.mark.parametrize(
    "change",
    [
        {"rate_uncertainty": True},
        {"rate_profile": ((0.0, 3.0), (30.0, 1.0))},
    ],
    ids=["uncertainty", "profile"],
)
def test_varying_or_uncertain_rates_keep_the_whole_window(huge, change):
    """A part of the window does not stand for the whole when the rates change over the days, or when the
    spread between trials comes from the rates themselves: the preview keeps the whole window."""
    sc = huge.replace(**change)
    res = compute_plan(PlanRequest(sc, PREVIEW))
    assert res.window_fraction == 1.0
    assert res.main.scenario.days == sc.days


def test_the_full_run_simulates_what_was_asked():
    sc = load_preset("llama3-405b").replace(trials=50)
    res = compute_plan(PlanRequest(sc, FULL))
    assert res.window_fraction == 1.0
    assert res.main.scenario.trials == 50
    assert res.main.trials.useful.shape == (50,)
