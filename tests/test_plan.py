"""The window's plan (planner_gui.core.session.plan): a preview fits a time budget without changing what it stands
for."""

from __future__ import annotations

import math

import numpy as np
import pytest

from planner_gui.core.files.presets import load_preset
from planner_gui.core.session.plan import FULL, PREVIEW, PlanRequest, compute_plan

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
    from planner_gui.core.analysis.results import simulate
    from planner_gui.core.model.scenario import Tiers

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


def _z(a: np.ndarray, b: np.ndarray) -> float:
    se = math.sqrt(float(np.var(a, ddof=1)) / len(a) + float(np.var(b, ddof=1)) / len(b))
    return 0.0 if se == 0 else float((b.mean() - a.mean()) / se)


@pytest.mark.parametrize(
    "name",
    ["tier + pool + continue + burn-in + uncertainty", "restart mode waiting for a short pool in a burn-in"],
)
def test_a_window_in_stretches_agrees_with_the_whole_window(name):
    """docs/model.md 2.9: a preview's window cut into stretches stepped side by side gives the whole window's
    means (goodput, every hour's label, the counts, the pool) within sampling error; every trial's hours still add
    up to the window, and the pool over time covers it end to end."""
    from planner_gui.core.analysis.results import simulate_scenarios
    from planner_gui.core.model.spares import Spares
    from planner_gui.core.sim.run import ALL_HOURS_KEYS
    from planner_gui.core.theory.profiles import burn_in_profile

    if name.startswith("tier"):
        sc = load_preset("h100-100k-plan").replace(gpus=16_384, days=20.0, trials=200, training=None)
        assert sc.uses_tiers and sc.uses_spares and sc.new_cluster and sc.rate_uncertainty
    else:
        sc = load_preset("llama3-405b").replace(
            days=20.0,
            trials=200,
            spares=Spares(spare_nodes=6, swap_min=20.0),
            rate_profile=burn_in_profile(0.7, 10, 20.0),
            new_cluster=True,
        )
    whole = simulate_scenarios([sc])[0]
    cut = simulate_scenarios([sc.replace(seed=sc.seed + 1)], segments=16)[0]
    assert whole.engine == cut.engine == "general"
    assert abs(_z(whole.goodput, cut.goodput)) < Z
    for k in ("unplanned", "planned"):
        assert abs(_z(getattr(whole.trials, k), getattr(cut.trials, k))) < Z, k
    a, b = whole.spares_run.trials, cut.spares_run.trials
    for k in ALL_HOURS_KEYS:
        assert abs(_z(a.hours[k], b.hours[k])) < Z, k
    np.testing.assert_allclose(sum(b.hours.values()), sc.hours, rtol=1e-9)
    assert abs(_z(a.nodes_in_repair, b.nodes_in_repair)) < Z
    assert b.repair_over_time.shape == (sc.trials, 16 * a.repair_over_time.shape[1])
    assert b.repair_grid[0] == 0.0 and b.repair_grid[-1] == pytest.approx(sc.hours)
    assert np.all(np.diff(b.repair_grid) >= 0)


def _training_in_a_burn_in(work_days: float, trials: int, **changes):
    """Llama 3's cluster new, in a 30-day burn-in (Weibull shape 0.5), training for ``work_days`` at 100 %."""
    from planner_gui.core.model.scenario import Training
    from planner_gui.core.theory.profiles import burn_in_profile

    return load_preset("llama3-405b").replace(
        days=30.0,
        trials=trials,
        rate_profile=burn_in_profile(0.5, 10, 30.0),
        new_cluster=True,
        training=Training(train_flops=None, compute_gpu_hours=16_384 * 24 * work_days),
        **changes,
    )


def test_a_preview_reads_the_time_to_train_off_its_stretches_in_time_order():
    """A training run starts in a new cluster's burn-in, at its highest rates: the work over the whole window's
    goodput (the preview's old figure: 14.2 days on h100-100k-plan where the full run gave 16.4) is too short. Read
    off each trial's stretches in time order, the preview's time to train is the simulated one within sampling
    error, its spread too."""
    from planner_gui.core.analysis.results import simulate_scenarios

    sc = _training_in_a_burn_in(work_days=8.0, trials=200)
    whole = simulate_scenarios([sc])[0]
    cut = simulate_scenarios([sc.replace(seed=sc.seed + 1)], segments=16)[0]
    assert whole.engine == cut.engine == "general"
    a, b = whole.time_to_train.hours, cut.time_to_train.hours
    assert abs(_z(a, b)) < Z
    n = len(a)
    se_ratio = math.sqrt(2.0 / (n - 1))  # of a sample's standard deviation, relative, for each of the two
    assert abs(float(np.std(b, ddof=1) / np.std(a, ddof=1)) - 1.0) < Z * math.sqrt(2.0) * se_ratio
    assert abs(_z(a, cut.time_to_train.work_hours / cut.goodput)) > Z  # (the old figure: far off)


def test_the_days_to_train_curve_without_a_closed_form_is_the_simulated_time_to_train(monkeypatch):
    """The days-vs-GPUs line divided the work by each count's window goodput: with a burn-in, a million GPUs
    read 6.3 days where the simulated run took 12.8, and the fewest days fell at 600k GPUs instead of 400k. In
    the full run the line is now the simulated time to train at every count (stepped together); each of its
    points agrees with a time to train simulated alone (another seed) within sampling error, the preview's line
    (read off the stretches) too, and the dots are some of the line's points."""
    from planner_gui.core.analysis.results import general_times_to_train
    from planner_gui.core.analysis.sweep import at_gpus
    from planner_gui.core.session import plan

    monkeypatch.setattr(plan, "FULL", plan.Quality("full", None, 3, 6, 4, 40))
    monkeypatch.setattr(plan, "CURVE_TRAIN_TRIALS", 100)
    monkeypatch.setattr(plan, "GPU_RANGE", (4096, 65536))
    sc = _training_in_a_burn_in(work_days=6.0, trials=100)
    res = compute_plan(PlanRequest(sc, plan.FULL))
    curve = res.cost_curve
    assert curve is not None and res.main.engine == "general" and len(curve.gpus) == 4
    assert curve.expected_from.startswith("the simulated time to train at each count")
    window_days = curve.ideal_days / np.asarray(res.by_gpus.goodput_mean)
    sd = {}
    for n, days in zip(curve.gpus, curve.days):
        alone = at_gpus(sc, int(n)).replace(seed=sc.seed + 7, trials=200)
        g = float(res.by_gpus.goodput_mean[list(curve.gpus).index(n)])
        [t] = general_times_to_train([alone], [g], [g])
        d = t.hours / 24.0
        se = math.sqrt(float(np.var(d, ddof=1)) / len(d) + (float(np.var(d, ddof=1)) / 100))
        assert abs(days - d.mean()) < Z * se, (n, days, d.mean())
        sd[int(n)] = float(np.std(d, ddof=1))
    assert curve.days[-1] > 1.3 * window_days[-1]  # (the old line: 2.4 days at 65,536 GPUs, 3.6 simulated)
    for t in curve.mc:
        i = list(curve.gpus).index(t.gpus)
        assert curve.days[i] == pytest.approx(float(np.mean(t.hours)) / 24.0, rel=1e-12)
    np.testing.assert_allclose(curve.goodput, curve.ideal_days / curve.days, rtol=1e-12)
    quick = compute_plan(PlanRequest(sc, PREVIEW))
    preview = quick.cost_curve
    assert preview is not None and preview.expected_from.startswith("a preview: the work read off")
    shared = [int(n) for n in preview.gpus if int(n) in sd]
    assert len(shared) >= 2
    for n in shared:
        i, j = list(preview.gpus).index(n), list(curve.gpus).index(n)
        se = sd[n] * math.sqrt(1.0 / float(quick.by_gpus.trials[i]) + 1.0 / 100)
        assert abs(preview.days[i] - curve.days[j]) < Z * se, (n, preview.days[i], curve.days[j])


def test_the_curve_has_no_point_where_the_model_refuses_the_count_in_the_preview_and_the_full_run(monkeypatch):
    """Continuing on replicas of 4,096 GPUs needs two of them: below 8,192 GPUs the model refuses the job. The full
    run's curve drew no point there but the preview's drew one (10,591 days at 1,024 GPUs on h100-100k-plan): both
    now leave those counts out, and draw every other."""
    from planner_gui.core.model.spares import Spares
    from planner_gui.core.session import plan

    monkeypatch.setattr(plan, "FULL", plan.Quality("full", None, 3, 6, 5, 20))
    monkeypatch.setattr(plan, "CURVE_TRAIN_TRIALS", 10)
    monkeypatch.setattr(plan, "SENSITIVITY_TRIALS", 6)
    monkeypatch.setattr(plan, "GPU_RANGE", (2048, 65536))
    sc = _training_in_a_burn_in(
        work_days=6.0, trials=20, spares=Spares(spare_nodes=64, recovery_mode="continue", replica_gpus=4096)
    )
    for q in (PREVIEW, plan.FULL):
        curve = compute_plan(PlanRequest(sc, q)).cost_curve
        assert curve is not None
        np.testing.assert_array_equal(np.isfinite(curve.days), curve.gpus >= 8192, err_msg=q.name)


def test_hours_to_reach_the_work_by_hand():
    from planner_gui.core.analysis.results import hours_to_reach

    useful = np.array([[2.0, 2.0, 2.0], [4.0, 0.0, 4.0]])  # stretches of 4 hours
    np.testing.assert_allclose(hours_to_reach(5.0, useful, 4.0), [8.0 + 1.0 / 0.5, 8.0 + 1.0 / 1.0])
    # Past the window's end, at the pace of its second half (stretches 1 and 2 of 3: 0.5 and 0.5 an hour).
    np.testing.assert_allclose(hours_to_reach(10.0, useful, 4.0), [12.0 + 4.0 / 0.5, 12.0 + 2.0 / 0.5])
    np.testing.assert_allclose(hours_to_reach(4.0, useful, 4.0), [8.0, 4.0])  # reached at a stretch's end


def test_a_preview_of_the_100k_plan_covers_its_whole_window_in_stretches():
    """h100-100k-plan (every feature at once, on the general engine) took 12 s to preview: the whole window of a
    few trials, a step per point. Its preview now steps the window in stretches side by side (docs/model.md 2.9):
    all 54 days, the time to train from each trial's stretches, and the status bar says so."""
    from planner_gui.ui.main_window import _run_text

    sc = load_preset("h100-100k-plan")
    res = compute_plan(PlanRequest(sc, PREVIEW))
    assert res.main.engine == "general" and res.segments > 1 and res.window_fraction == 1.0
    assert res.main.scenario.days == sc.days
    np.testing.assert_allclose(res.main.trials.useful / res.main.goodput, sc.hours, rtol=1e-9)
    ttt = res.main.time_to_train
    assert ttt is not None
    assert np.all(ttt.hours > ttt.work_hours) and np.all(np.isfinite(ttt.hours))
    assert f"the window in {res.segments} stretches side by side" in _run_text(res)
    assert FULL.budget_s is None  # (the full run is never cut)


def test_runs_stepped_together_give_what_they_give_alone():
    """Runs on the general engine stepped together (a sweep's points) draw their chunks as each needs them, and
    each gives exactly the numbers it gives alone."""
    from planner_gui.core.analysis.results import simulate_scenarios

    base = load_preset("h100-100k-plan").replace(days=3.0, trials=6, training=None)
    small, large = base.replace(gpus=4_096), base.replace(gpus=262_144)
    together = simulate_scenarios([small, large])
    for sc, res in zip((small, large), together, strict=True):
        alone = simulate_scenarios([sc])[0]
        np.testing.assert_array_equal(res.goodput, alone.goodput)
        np.testing.assert_array_equal(res.trials.unplanned, alone.trials.unplanned)
