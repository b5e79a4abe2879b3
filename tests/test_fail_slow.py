"""Fail-slow nodes (docs/model.md section 1, "Fail-slow nodes"): a node turns slow at ``slow_rate`` per GPU-hour, the
synchronous job computes at ``slow_factor`` of its speed while any node is slow, and each slow node is drained
``slow_detect`` minutes after it turned slow, with a planned restart. Checked against closed forms where they hold and
against the event-by-event reference simulator elsewhere; off by default, every number is today's."""

from __future__ import annotations

import dataclasses
import json
import math

import numpy as np
import pytest
from reference_model import simulate_reference
from test_sim import COUNTS, Z, _engine, _z, against_reference

from planner_gui.cli import main
from planner_gui.core.analysis.results import simulate
from planner_gui.core.files.presets import load_preset
from planner_gui.core.files.scenario_io import ScenarioError, scenario_from_dict, scenario_to_dict, validate
from planner_gui.core.model.scenario import Scenario, Training
from planner_gui.core.model.spares import Spares
from planner_gui.core.sim.capabilities import train_engine, window_engine

SLOW = {"slow_rate_per_gpu_hour": 2e-6, "slow_factor": 0.5, "slow_detect_min": 30.0}


def _quiet(**changes: object) -> Scenario:
    """Nothing but slow nodes: no failure, no planned interruption, no restart, no write: every hour computes."""
    base = Scenario(
        days=5.0,
        planned_per_day=0.0,
        restart_min=0.0,
        checkpoint_write_s=0.0,
        checkpoint_interval_min=60.0,
    ).scale_rates(0.0)
    return base.replace(**changes)


# (a detection longer than the warm-up starts the window with episodes begun before the world's own start)
@pytest.mark.parametrize("factor,detect", [(0.5, 30.0), (0.2, 240.0), (0.5, 10_080.0)])
def test_without_failures_the_slow_hours_are_the_busy_share_of_an_m_d_infinity_queue(factor, detect):
    sc = _quiet(slow_rate_per_gpu_hour=3e-6, slow_factor=factor, slow_detect_min=detect)
    got = _engine(sc, 3000, 5)
    lam, d = sc.slow_rate_per_gpu_hour * sc.gpus, detect / 60.0
    busy = -math.expm1(-lam * d)  # the share of time at least one episode is under way
    expected = sc.hours * (1.0 - factor) * busy
    slow = got.hours["slow"]
    assert abs(slow.mean() - expected) <= Z * slow.std(ddof=1) / math.sqrt(len(slow)), (slow.mean(), expected)
    # Nothing is rolled back and nothing stalls: every other hour is useful.
    np.testing.assert_allclose(got.hours["useful"] + slow, sc.hours, rtol=0, atol=1e-6)
    # The drains are a Poisson process of the episodes' rate (their starts, moved by D).
    drains = got.slow_drains
    assert drains is not None
    assert abs(drains.mean() - lam * sc.hours) <= Z * math.sqrt(lam * sc.hours / len(drains))
    assert got.planned.sum() == 0  # drains are not counted as planned interruptions


GRID = [
    ("16k llama3 + slow", Scenario(days=4.0, checkpoint_interval_min=30.0, **SLOW), 250),
    (
        "16k slow, often and long, planned often",
        Scenario(days=3.0, checkpoint_interval_min=20.0, planned_per_day=12.0, slow_rate_per_gpu_hour=1e-5,
                 slow_factor=0.3, slow_detect_min=90.0),
        200,
    ),
    (
        "100k in-memory + pool + continue + slow",
        load_preset("h100-100k-inmemory").replace(
            days=1.0, checkpoint_interval_min=60.0,
            tiers=dataclasses.replace(load_preset("h100-100k-inmemory").tiers, fast_interval_min=5.0),
            spares=Spares(spare_nodes=60, recovery_mode="continue", swap_min=10.0), **SLOW),
        120,
    ),
    (
        "65k restart pool that shrinks + slow",
        Scenario(gpus=65_536, days=1.5, checkpoint_interval_min=30.0,
                 spares=Spares(spare_nodes=6, swap_min=10.0, min_gpus=60_000), **SLOW).scale_rates(3.0),
        150,
    ),
]  # fmt: skip


@pytest.mark.parametrize("name,sc,ref_trials", GRID, ids=[g[0] for g in GRID])
def test_the_general_engine_agrees_with_the_reference_with_slow_nodes(name, sc, ref_trials):
    assert window_engine(sc).key == "general"
    got, ref, bad = against_reference(sc, ref_trials, 31, (*COUNTS, "slow_drains"))
    assert not bad, "; ".join(bad)
    assert got.hours["slow"].mean() > 0 and ref.hours["slow"].mean() > 0


def test_the_time_to_train_with_slow_nodes_agrees_with_the_reference():
    sc = Scenario(checkpoint_interval_min=30.0, training=Training(compute_gpu_hours=16_384 * 30.0), **SLOW).replace(
        slow_rate_per_gpu_hour=8e-6, slow_detect_min=120.0
    )
    assert train_engine(sc).key == "general"
    ref = simulate_reference(sc, 150, 41, training=True)
    res = simulate(sc.replace(trials=600, seed=42))
    assert res.time_to_train is not None
    got = res.time_to_train.hours
    assert ref.train_hours is not None
    assert abs(_z(got, ref.train_hours)) <= Z
    # Slower than the same run without slow nodes (same seed: the failures are the same draws).
    plain = simulate(sc.replace(trials=600, seed=42, slow_rate_per_gpu_hour=0.0))
    assert plain.time_to_train is not None
    assert got.mean() > plain.time_to_train.hours.mean() + 0.5


def test_off_by_default_every_number_is_todays():
    base = Scenario(trials=200, days=10.0)
    other = base.replace(slow_factor=0.1, slow_detect_min=600.0)  # no rate: nothing turns slow
    a, b = simulate(base).to_json_dict(), simulate(other).to_json_dict()
    a.pop("scenario"), b.pop("scenario")
    assert a == b
    assert "slow" not in a and "slow" not in a["hours"]
    assert window_engine(base).key == window_engine(other).key == "renewal"
    # With a pool, on the general engine, alike.
    pool = base.replace(spares=Spares(spare_nodes=30, swap_min=10.0))
    a = simulate(pool).to_json_dict()
    b = simulate(pool.replace(slow_factor=0.1)).to_json_dict()
    a.pop("scenario"), b.pop("scenario")
    assert a == b and "slow" not in a["hours"]


def test_slow_nodes_cost_goodput_and_the_json_says_where_it_went():
    sc = Scenario(trials=300, **SLOW)
    res = simulate(sc).to_json_dict()
    plain = simulate(sc.replace(slow_rate_per_gpu_hour=0.0)).to_json_dict()
    assert res["goodput"]["mean"] < plain["goodput"]["mean"]
    assert res["goodput_expected"] is None  # no closed form with slow nodes
    assert set(res["hours"]) == {"useful", "checkpoint", "lost_work", "recovery", "planned_restart", "slow"}
    assert math.isclose(sum(res["hours"].values()), sc.hours, rel_tol=1e-9)
    # Hand check while episodes are rare: rate x GPUs x T x (1 - f) x D x the share of time computing.
    lam = sc.slow_rate_per_gpu_hour * sc.gpus
    rare = lam * sc.hours * (1.0 - sc.slow_factor) * (sc.slow_detect_min / 60.0)
    computing = (res["hours"]["useful"] + res["hours"]["lost_work"] + res["hours"]["slow"]) / sc.hours
    assert res["hours"]["slow"] == pytest.approx(rare * computing, rel=0.06)
    assert res["slow"]["drains_expected"] == pytest.approx(lam * sc.hours)
    assert abs(res["slow"]["drains"]["mean"] - lam * sc.hours) <= Z * res["slow"]["drains"]["sem"]
    # Each drain is a planned restart: the planned restart's hours grow by about the drains' restarts.
    extra = res["hours"]["planned_restart"] - plain["hours"]["planned_restart"]
    assert extra == pytest.approx(res["slow"]["drains"]["mean"] * sc.restart_min / 60.0, rel=0.15)


def test_each_input_changes_what_its_name_says():
    base = Scenario(trials=300, **SLOW)
    h = simulate(base).to_json_dict()["hours"]["slow"]
    slower = simulate(base.replace(slow_factor=0.25)).to_json_dict()["hours"]["slow"]
    later = simulate(base.replace(slow_detect_min=60.0)).to_json_dict()["hours"]["slow"]
    oftener = simulate(base.replace(slow_rate_per_gpu_hour=4e-6)).to_json_dict()["hours"]["slow"]
    assert slower == pytest.approx(h * 1.5, rel=0.1)  # (1 - 0.25) / (1 - 0.5)
    assert later == pytest.approx(h * 2.0, rel=0.1)
    assert oftener == pytest.approx(h * 2.0, rel=0.1)


def test_the_inputs_go_through_files_and_flags(tmp_path, capsys):
    sc = Scenario(**SLOW)
    doc = scenario_to_dict(sc)
    assert doc["format_version"] == 2 and {k: doc[k] for k in SLOW} == SLOW
    assert scenario_from_dict(doc) == sc
    assert not any(k.startswith("slow") for k in scenario_to_dict(Scenario()))
    with pytest.raises(ScenarioError, match="slow_factor"):
        validate(sc.replace(slow_factor=1.5))
    with pytest.raises(ScenarioError, match="slow_rate_per_gpu_hour"):
        validate(sc.replace(slow_rate_per_gpu_hour=-1.0))
    assert main(["run", "--slow-rate", "2e-6", "--slow-factor", "0.5", "--slow-detect", "30", "--trials", "100",
                 "--json"]) == 0  # fmt: skip
    out = json.loads(capsys.readouterr().out)
    assert out["hours"]["slow"] > 0 and out["slow"]["drains"]["mean"] > 0
    assert out["scenario"]["slow_rate_per_gpu_hour"] == 2e-6
    assert "--slow-rate 2e-06" in out["scenario"]["name"]
    assert main(["run", "--slow-factor", "1.5"]) != 0
    err = capsys.readouterr().err
    assert "--slow-factor" in err and "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert main(["run", "--slow-rate", "2e-6", "--trials", "100"]) == 0
    text = capsys.readouterr().out
    assert "slow nodes" in text and "Fail-slow" in text


def test_a_preview_in_stretches_agrees_with_the_whole_window():
    from planner_gui.core.sim.model import sim_model
    from planner_gui.core.sim.run import simulate_windows

    sc = Scenario(days=8.0, checkpoint_interval_min=30.0, new_cluster=True, **SLOW)
    m = sim_model(sc, None, 30.0, trials=600)
    whole, parts = simulate_windows([(m, 600, 3)])[0], simulate_windows([(m, 600, 3)], segments=8)[0]
    for key in ("useful", "slow", "planned_restart"):
        assert abs(_z(whole.hours[key], parts.hours[key])) <= Z, key
    assert parts.slow_drains is not None and whole.slow_drains is not None
    assert abs(_z(whole.slow_drains, parts.slow_drains)) <= Z


def test_the_two_tier_preset_with_slow_nodes_runs_on_the_general_engine():
    sc = load_preset("h100-100k-inmemory").replace(trials=100, days=2.0, planned_per_day=0.0, **SLOW)
    assert window_engine(sc).key == "general"
    assert window_engine(sc.replace(slow_rate_per_gpu_hour=0.0)).key != "general"
    res = simulate(sc).to_json_dict()
    assert res["hours"]["slow"] > 0 and res["goodput_expected"] is None


def test_the_levers_change_the_slow_inputs_and_rank_by_paired_monte_carlo():
    from planner_gui.core.analysis.sensitivity import has_closed_form, levers

    sc = Scenario(**SLOW)
    assert not has_closed_form(sc)  # the exact model knows nothing of slow nodes: never ranked by it
    by_name = {lv.name: lv for lv in levers(sc)}
    assert by_name["slow-node detection"].apply(sc) == sc.replace(slow_detect_min=15.0)
    assert by_name["slow-node rate"].apply(sc) == sc.replace(slow_rate_per_gpu_hour=1e-6)
    assert "slow-node rate" not in {lv.name for lv in levers(Scenario())}
    assert by_name["slow-node slowdown"].apply(sc) == sc.replace(slow_factor=0.75)  # half the slowdown
    doc = scenario_to_dict(sc.replace(slow_factor=0.0))  # a factor of 0 (the job stops while slow) is kept
    assert scenario_from_dict(doc).slow_factor == 0.0


def test_the_window_group_sets_each_slow_input_alone_and_the_breakdown_shows_its_hours(make_window, qtbot, slide_alone):
    from PySide6.QtWidgets import QLabel

    win = make_window()
    note = win.findChild(QLabel, "slowNote")
    assert note is not None and note.text().startswith("Off")
    assert "slow" not in win.plots._breakdown_shown
    before = win.scenario()
    rate = win.controls.values["slow_rate_per_gpu_hour"]
    assert rate.unit.text() == "per 1,000 GPU-days"
    rate.edited.emit(0.096)  # per 1,000 GPU-days: 4e-6 per GPU-hour
    qtbot.waitUntil(lambda: not win.compute.busy and win.results_current(), timeout=60_000)
    sc = win.scenario()
    assert sc.slow_rate_per_gpu_hour == pytest.approx(4e-6, rel=1e-12)
    assert sc.replace(name=before.name) == before.replace(slow_rate_per_gpu_hour=sc.slow_rate_per_gpu_hour)
    assert rate.spin.value() == pytest.approx(0.096)
    assert note.text() == (
        "A node turns slow one every 15.3 h at 16,384 GPUs; the job runs at 50% of its speed for 30 min each time, "
        "then restarts without it"
    )  # 1 / (4e-6 x 16,384) = 15.26 h
    keys = win.plots._breakdown_shown
    assert keys[-1] == "slow" and "waiting_for_spares" not in keys  # its row, without the pool's rows
    _, widths = win.plots.curve_data("timeBreakdownPlot")
    shown = win.plots.result.main.hours_per_trial()["slow"].mean()
    assert shown > 0 and widths[keys.index("slow")] == pytest.approx(shown)
    for name, field in (("slowFactorSlider", "slow_factor"), ("slowDetectSlider", "slow_detect_min")):
        slide_alone(win, name, field, 150)


def test_the_tornado_brackets_the_slow_inputs_only_where_nodes_run_slow():
    from planner_gui.core.analysis.tornado import unsure_inputs

    keys = {u.key for u in unsure_inputs(Scenario(**SLOW))}
    assert {"slow_rate_per_gpu_hour", "slow_detect_min"} <= keys
    assert not any(k.startswith("slow") for k in (u.key for u in unsure_inputs(Scenario())))
    rate = next(u for u in unsure_inputs(Scenario(**SLOW)) if u.key == "slow_rate_per_gpu_hour")
    assert (rate.low, rate.high) == (1e-6, 4e-6)
    assert rate.at(Scenario(**SLOW), 1e-6) == Scenario(**SLOW).replace(slow_rate_per_gpu_hour=1e-6)
    factor = next(u for u in unsure_inputs(Scenario(**SLOW)) if u.key == "slow_factor")
    assert (factor.low, factor.value, factor.high) == (0.0, 0.5, 0.75)  # twice and half the slowdown
    # At a rate of 0 the rate is an estimate of none: --bounds brackets it (and only then is it an input).
    at_zero = unsure_inputs(Scenario(), {"slow_rate_per_gpu_hour": (0.0, 2e-6)})
    assert any(u.key == "slow_rate_per_gpu_hour" and u.high == 2e-6 for u in at_zero)


def test_the_strategies_comparison_gives_the_slow_hours_each_strategy_pays():
    from planner_gui.core.analysis.strategies import compare_strategies

    sc = Scenario(trials=60, days=10.0, **SLOW)
    doc = compare_strategies(sc, None)
    assert doc["hours_keys"][-1] == "slow"
    for row in doc["at_scale"]:
        if row["error"] is None:
            assert row["hours"]["slow"] > 0
            assert sum(row["hours"].values()) == pytest.approx(sc.hours, rel=1e-9)
    assert "slow" not in compare_strategies(Scenario(trials=60, days=10.0), None)["hours_keys"]


def test_a_preview_over_the_start_of_the_window_scales_the_slow_hours_with_the_rest():
    """The window's quick preview simulates the start of a long window and scales it up (core/session/plan.py): the slow
    nodes' hours and drains scale with every other hour (they were left at the start's: about 80 times too few)."""
    from planner_gui.core.session.plan import _whole_window_run

    sc = Scenario(trials=400, **SLOW)
    full = simulate(sc)
    fraction = 0.125
    scaled = _whole_window_run(simulate(sc.replace(days=sc.days * fraction, seed=7)), sc, fraction)
    a, b = full.hours_per_trial(), scaled.hours_per_trial()
    assert set(a) == set(b)
    for key in a:
        assert abs(_z(a[key], b[key])) <= Z, key
    assert scaled.slow_drains is not None and full.slow_drains is not None
    assert abs(scaled.slow_drains.mean() - full.slow_drains.mean()) <= 0.05 * full.slow_drains.mean()
    np.testing.assert_allclose(sum(b[k].mean() for k in b), sc.hours, rtol=1e-6)


def test_a_new_clusters_expected_drains_wait_a_detection():
    sc = Scenario(trials=300, days=10.0, new_cluster=True, **SLOW).replace(slow_detect_min=7 * 24 * 60.0)
    d = simulate(sc).to_json_dict()["slow"]
    lam = sc.slow_rate_per_gpu_hour * sc.gpus
    assert d["drains_expected"] == pytest.approx(lam * (sc.hours - 168.0))
    assert abs(d["drains"]["mean"] - d["drains_expected"]) <= Z * d["drains"]["sem"]


def test_the_report_gives_the_slow_nodes_in_its_headline_inputs_and_model():
    from test_report import DATE, lookup, parse, shown

    from planner_gui.core.session.plan import FULL, PlanRequest, compute_plan
    from planner_gui.report import render_report

    sc = Scenario(trials=100, days=10.0, **SLOW)
    plan = compute_plan(PlanRequest(sc, FULL))
    html = render_report(plan, generated=DATE)
    doc = plan.main.to_json_dict()
    row = next(r for r in parse(html).root.find("table", class_="headline").find_all("tr") if "Fail-slow" in r.text())
    spans = row.find_all("span", class_="num")
    assert {s.attrs["data-key"] for s in spans} == {"hours/slow", "slow/drains/mean", "slow/drains_expected"}
    for span in spans:
        value, tol = shown(span.text(), span.attrs["data-unit"])
        assert value is not None and abs(value - lookup(doc, span.attrs["data-key"])) <= tol * (1 + 1e-9) + 1e-12
    assert "Fail-slow rate" in html and "Slow-node detection" in html and "Fail-slow nodes</b>" in html
    plain = render_report(compute_plan(PlanRequest(Scenario(trials=100, days=10.0), FULL)), generated=DATE)
    assert "Fail-slow nodes</td>" not in plain and "h at the slow pace" not in plain


def test_a_tornado_that_brackets_slow_nodes_from_none_simulates_its_ends():
    """At a rate of 0 the scenario has a closed form, but the end with slow nodes has none: every end is then
    simulated (the closed form gave both ends the same goodput, as if the rate did nothing)."""
    from planner_gui.core.analysis.tornado import tornado

    t = tornado(Scenario(trials=150, days=10.0), {"slow_rate_per_gpu_hour": (0.0, 4e-6)})
    assert not t.exact
    bar = next(b for b in t.bars if b.input == "slow_rate_per_gpu_hour")
    assert bar.goodput_high < bar.goodput_low - 0.005
