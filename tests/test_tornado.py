"""The tornado: each unsure input at its two ends, every bar checked against the runs it is made of."""

from __future__ import annotations

import dataclasses
import json
import math
import subprocess
import sys

import numpy as np
import pytest
from scipy import stats

from planner_gui.core.analysis.results import simulate_scenarios
from planner_gui.core.analysis.sensitivity import has_closed_form
from planner_gui.core.analysis.tornado import RATE_QUANTILES, end_text, parse_bounds, tornado, unsure_inputs
from planner_gui.core.files.presets import load_preset
from planner_gui.core.files.scenario_io import ScenarioError
from planner_gui.core.model.scenario import Scenario, Training
from planner_gui.core.model.spares import Spares
from planner_gui.core.theory.exact import daly_goodput
from planner_gui.core.theory.rates import evidence_of


def daly(sc: Scenario, interval_min: float) -> float:
    m = 1.0 / sc.failure_rate_per_hour
    return float(daly_goodput(interval_min / 60, sc.checkpoint_write_s / 3600, sc.recovery_min / 60, m))


def test_each_exact_bar_is_dalys_formula_at_its_two_ends():
    sc = Scenario(gpus=100_000, planned_per_day=0.0, checkpoint_interval_min=10.0, checkpoint_write_s=30.0)
    t = tornado(sc)
    assert t.exact and t.days is None and t.goodput == pytest.approx(daly(sc, 10.0), rel=1e-12)
    bars = {b.input: b for b in t.bars}
    det = bars["detect_min"]
    assert (det.low, det.value, det.high) == (sc.detect_min / 2, sc.detect_min, sc.detect_min * 2)
    assert det.goodput_low == pytest.approx(daly(sc.replace(detect_min=det.low), 10.0), rel=1e-12)
    assert det.goodput_high == pytest.approx(daly(sc.replace(detect_min=det.high), 10.0), rel=1e-12)
    gpu = bars["rates.GPU"]
    for end, g in ((gpu.low, gpu.goodput_low), (gpu.high, gpu.goodput_high)):
        assert g == pytest.approx(daly(sc.scale_rates(end / gpu.value, "GPU"), 10.0), rel=1e-12)
    assert "planned_per_day" not in bars  # there are none to vary
    spreads = [b.spread for b in t.bars]
    assert spreads == sorted(spreads, reverse=True) and spreads[0] > 0  # widest first


def test_a_rate_with_evidence_spans_its_posteriors_5th_to_95th_percentile():
    """Llama 3's GPU causes: 268 interruptions over one exposure, so the category's rate is one Gamma; its ends
    are that Gamma's percentiles (scipy's, independently of the module's quadrature)."""
    sc = Scenario()
    gpu = {u.key: u for u in unsure_inputs(sc)}["rates.GPU"]
    comps = [c for c in sc.components if c.category == "GPU"]
    count = sum(evidence_of(c).count for c in comps)
    assert count == 268
    shape = count + 0.5 * len(comps)
    scale = gpu.value / count  # per 1,000 GPU-days per unit of the Gamma
    lo, hi = (stats.gamma.ppf(q, shape) * scale for q in RATE_QUANTILES)
    assert gpu.low == pytest.approx(lo, rel=1e-9) and gpu.high == pytest.approx(hi, rel=1e-9)
    assert "268 interruptions" in gpu.why
    # A component with no evidence behind it: half to twice.
    odd = sc.replace(
        components=(*sc.components, dataclasses.replace(sc.components[0], name="Cosmic rays", category="Odd"))
    )
    u = {x.key: x for x in unsure_inputs(odd)}["rates.Odd"]
    assert (u.low, u.high) == pytest.approx((u.value / 2, u.value * 2)) and "no evidence" in u.why


def test_days_to_train_ends_are_the_work_over_each_ends_goodput():
    sc = Scenario(gpus=100_000, training=Training(), checkpoint_interval_min=30.0)
    t = tornado(sc)
    assert t.outcome == "days"
    ends = {u.key: u for u in unsure_inputs(sc)}
    for b in t.bars:
        for end, g, days in ((b.low, b.goodput_low, b.days_low), (b.high, b.goodput_high, b.days_high)):
            moved = ends[b.input].at(sc, end)
            assert days == pytest.approx(moved.training.gpu_hours / moved.gpus / g / 24, rel=1e-12), b.input
    mfu = {b.input: b for b in t.bars}["training.mfu"]
    assert (mfu.low, mfu.high) == pytest.approx((sc.training.mfu - 0.05, sc.training.mfu + 0.05))
    assert mfu.goodput_low == pytest.approx(t.goodput) and mfu.days_low > t.days > mfu.days_high


def test_bounds_replace_an_inputs_ends_and_bad_ones_say_so():
    sc = Scenario()
    t = tornado(sc, {"detect_min": (1.0, 30.0)})
    det = {b.input: b for b in t.bars}["detect_min"]
    assert (det.low, det.high) == (1.0, 30.0)
    assert det.goodput_high == pytest.approx(tornado(sc.replace(detect_min=30.0)).goodput, rel=1e-12)
    assert det.why == "the ends given (1 to 30 min)"  # not the default ends' reason
    with pytest.raises(ValueError, match="no unsure input 'nope'"):
        tornado(sc, {"nope": (1.0, 2.0)})
    with pytest.raises(ValueError, match="must hold the value entered, 5 min"):  # ends on one side of the value
        tornado(sc, {"detect_min": (10.0, 20.0)})
    for bad in ("detect_min", "detect_min=3", "detect_min=5:2", "detect_min=a:b", "detect_min=-1:2", "=1:2"):
        with pytest.raises(ValueError, match="--bounds"):
            parse_bounds([bad])


def test_paired_monte_carlo_bars_are_the_runs_of_their_ends_alone():
    """Without a closed form (a spare pool), every end is simulated with the scenario's seed: each bar's number is
    what that end's scenario gives when simulated by itself, and the standard errors are of the differences."""
    sc = Scenario(gpus=16_384, days=3.0, trials=60, spares=Spares(spare_nodes=4, swap_min=10.0))
    assert not has_closed_form(sc)
    t = tornado(sc, {"detect_min": (2.0, 20.0)})
    assert not t.exact and t.trials == 60
    det = {b.input: b for b in t.bars}["detect_min"]
    alone = simulate_scenarios([sc.replace(detect_min=20.0)], general=True)[0]
    assert det.goodput_high == pytest.approx(float(alone.goodput.mean()), rel=1e-12)
    base = simulate_scenarios([sc], general=True)[0]
    assert t.goodput == pytest.approx(float(base.goodput.mean()), rel=1e-12)
    diff = alone.goodput - base.goodput
    assert det.goodput_high_se == pytest.approx(float(diff.std(ddof=1) / math.sqrt(len(diff))), rel=1e-9)
    repairs = {b.input: b for b in t.bars}["spares.repair_hours"]
    assert repairs.goodput_high < repairs.goodput_low  # longer repairs: the pool runs short more often
    assert np.all(np.diff([b.spread for b in t.bars]) <= 0)


def test_an_end_that_never_finishes_is_said_and_the_others_are_still_drawn():
    """Repairs of 2,000 hours leave a 12-node pool dry: that end's run never finishes. The tornado says so for that
    end (the widest bar: its outcome is unbounded) and gives every other end as the runs alone do."""
    sc = Scenario(
        gpus=16_384,
        days=10.0,
        trials=40,
        training=Training(train_flops=None, compute_gpu_hours=16_384 * 24 * 8.0),
        spares=Spares(spare_nodes=12, swap_min=10.0),
    )
    repairs = {u.key: u for u in unsure_inputs(sc)}["spares.repair_hours"]
    t = tornado(sc, {"spares.repair_hours": (repairs.value / 2, 2_000.0)})
    first = t.bars[0]
    assert first.input == "spares.repair_hours" and first.spread == math.inf
    assert first.refused_low is None and "never finish" in first.refused_high
    assert end_text(t, first, "high").startswith("cannot run: ") and "days" in end_text(t, first, "low")
    d = first.to_dict()
    assert d["days_high"] is None and d["refused_high"] == first.refused_high and d["days_low"] > 0
    json.dumps([b.to_dict() for b in t.bars], allow_nan=False)
    gpu = {b.input: b for b in t.bars}["rates.GPU"]  # an end that runs: as its run alone gives it
    alone = simulate_scenarios([gpu_at(sc, gpu.high)], general=True)[0]
    assert gpu.days_high == pytest.approx(float(alone.time_to_train.hours.mean()) / 24.0, rel=1e-12)


def test_a_refused_time_to_train_is_said_in_its_place_without_simulating_the_others_twice(monkeypatch):
    """The tornado, goal seek and the days-cost curve ran every scenario again, one by one, when one of them was
    refused: the refusal now comes back in its place, from one run of the windows."""
    from planner_gui.core.analysis import results

    sc = Scenario(
        gpus=16_384, days=10.0, trials=40, training=Training(train_flops=None, compute_gpu_hours=16_384 * 24 * 8.0),
        spares=Spares(spare_nodes=12, swap_min=10.0),
    )  # fmt: skip
    dry = sc.replace(spares=Spares(spare_nodes=12, swap_min=10.0, repair_hours=(("GPU", 2000.0), ("Host", 2000.0))))
    calls = []
    real = results._simulate_general
    monkeypatch.setattr(results, "_simulate_general", lambda scs, *a: calls.append(len(scs)) or real(scs, *a))
    said: list = [None, None]
    got = simulate_scenarios([sc, dry], general=True, refused=said)
    assert calls == [2]  # the windows once, together
    assert said[0] is None and got[0].time_to_train is not None
    assert "never finish" in said[1] and got[1].time_to_train is None and len(said[1].splitlines()) == 1
    alone = simulate_scenarios([sc], general=True)[0]  # the other is what it gives alone
    np.testing.assert_array_equal(got[0].time_to_train.hours, alone.time_to_train.hours)
    with pytest.raises(ScenarioError, match="never finish"):  # without the list, a refusal fails the call
        simulate_scenarios([sc, dry], general=True)


def gpu_at(sc: Scenario, per_kday: float) -> Scenario:
    rate = math.fsum(c.rate_per_gpu_hour for c in sc.components if c.category == "GPU") * 24_000.0
    return sc.scale_rates(per_kday / rate, "GPU")


def test_what_a_scenario_does_not_use_is_not_varied_and_repairs_are_weighted_by_failures():
    sc = Scenario(gpus=16_384, days=3.0, trials=60, spares=Spares(spare_nodes=4, swap_min=10.0))
    keys = {u.key: u for u in unsure_inputs(sc)}
    assert "spares.continue_stall_min" not in keys  # restart mode: the continue stall moves nothing
    cont = sc.replace(spares=dataclasses.replace(sc.spares, recovery_mode="continue", replica_gpus=2_048))
    assert "spares.continue_stall_min" in {u.key for u in unsure_inputs(cont)}
    from planner_gui.core.model.spares import component_scope, repair_hours_of

    # The repair time a failure starts, on average: each category's mean weighted by how often its nodes fail.
    w = {}
    for c in sc.components:
        if component_scope(c) != "process":
            w[c.category] = w.get(c.category, 0.0) + c.rate_per_gpu_hour
    mean = sum(repair_hours_of(k, sc.spares) * v for k, v in w.items()) / sum(w.values())
    assert keys["spares.repair_hours"].value == pytest.approx(mean, rel=1e-12)


def test_an_exact_end_of_a_billion_billion_days_reads_in_powers_of_ten():
    sc = load_preset("h100-1m").replace(training=Training(mfu=0.4))
    t = tornado(sc, {"restart_min": (1.0, 200.0)})
    restart = {b.input: b for b in t.bars}["restart_min"]
    assert t.exact and restart.days_high > 1e6
    assert end_text(t, restart, "high") == f"{restart.days_high:.3g} days"


def test_the_tornado_command_prints_the_contracts_json_sorted_by_range():
    """With a training run (--mfu alone times Llama 3's compute) the bars are days to train."""
    argv = [sys.executable, "-m", "planner_gui", "tornado", "--preset", "h100-100k", "--mfu", "0.4", "--json"]
    out = subprocess.run(argv, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    bars = json.loads(out.stdout)
    for b in bars:
        assert {"input", "low", "high", "days_low", "days_high"} <= set(b)
        assert b["days_low"] > 0 and b["days_high"] > 0
    ranges = [abs(b["days_high"] - b["days_low"]) for b in bars]
    assert ranges == sorted(ranges, reverse=True) and len(bars) >= 8
    bad = subprocess.run(
        [sys.executable, "-m", "planner_gui", "tornado", "--preset", "llama3-405b", "--bounds", "x=1:2"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "no unsure input 'x'" in bad.stderr


def test_every_preset_has_a_tornado_and_its_ends_are_scenarios_the_model_takes():
    for name in ("llama3-405b", "h100-100k", "h100-1m", "epoch-100k", "bloom-3h-384", "h100-100k-inmemory"):
        sc = load_preset(name)
        inputs = unsure_inputs(sc)
        assert inputs, name
        for u in inputs:
            assert u.low < u.value < u.high or (u.key == "training.mfu"), (name, u.key)


def test_a_category_of_several_evidence_scales_spans_about_its_sums_percentiles():
    """Two causes of one category with their own evidence over different exposures: the category's rate is a sum of
    two Gammas of different scales, whose ends the module matches by a Gamma of the same mean and variance. Against
    the sum's own percentiles (a million draws): within 3 %."""
    from planner_gui.core.model.scenario import Component

    comps = (
        Component("A", "Odd", 2e-6, count=40, exposure_gpu_hours=40 / 2e-6),
        Component("B", "Odd", 1e-6, count=6, exposure_gpu_hours=6 / 3e-6),  # a rate a third of its evidence's
    )
    sc = Scenario(components=comps)
    u = unsure_inputs(sc)[-1]
    assert u.key == "rates.Odd" and "effective" in u.why
    rng = np.random.default_rng(5)
    total = (2e-6 / 40) * rng.gamma(40.5, size=1_000_000) + (1e-6 / 6) * rng.gamma(6.5, size=1_000_000)
    lo, hi = np.percentile(total * 24_000.0, [5, 95])
    assert u.low == pytest.approx(lo, rel=0.03) and u.high == pytest.approx(hi, rel=0.03)
