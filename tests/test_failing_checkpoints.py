"""Checkpoints that fail (docs/model.md 2.1 "Saves that fail", 2.2): each save (a snapshot; a persistent point's
copy to storage) fails with ``save_fail_p``, the checkpoint before it standing; a restore from the fast tier fails
its validation with ``restore_fail_p`` and restores from storage after the fast restore's time. Checked against a
closed form for one tier, against the event-by-event reference simulator elsewhere; off by default, every number
is today's."""

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
from planner_gui.core.files.scenario_io import ScenarioError, scenario_from_dict, scenario_to_dict
from planner_gui.core.model.scenario import Scenario, Tiers, Training
from planner_gui.core.model.spares import Spares
from planner_gui.core.sim import job
from planner_gui.core.sim.capabilities import train_engine, window_engine
from planner_gui.core.sim.job import CHANGE_KIND
from planner_gui.core.sim.model import RESTART_FAST, RESTART_PERSISTENT, sim_model

IM = load_preset("h100-100k-inmemory")
assert IM.tiers is not None
SAME = dataclasses.replace(IM.tiers, fast_interval_min=2.0, fast_placement="same-domain")


def _one_tier_goodput(sc: Scenario, p: float) -> float:
    """docs/model.md 3, "Saves that fail, one tier": today's renewal goodput less ``lam tau S' p q / (1 - p q)``
    (no planned interruptions here, so ``S' = e^(-lam R)``), ``q = e^(-lam s)``; today's is ``lam tau S' q / (1 -
    q)``."""
    lam = sum(c.rate_per_gpu_hour for c in sc.components) * sc.gpus
    tau = float(sc.checkpoint_interval_min) / 60.0
    s = tau + sc.checkpoint_write_s / 3600.0
    r = (sc.detect_min + sc.restart_min) / 60.0
    q = math.exp(-lam * s)
    runs = math.exp(-lam * r)
    return lam * tau * runs * (q / (1.0 - q) - p * q / (1.0 - p * q))


@pytest.mark.parametrize("p,interval", [(0.0, 30.0), (0.2, 30.0), (0.5, 60.0), (0.9, 10.0)])
def test_one_tier_goodput_is_the_renewal_closed_form(p, interval):
    sc = Scenario(days=5.0, planned_per_day=0.0, checkpoint_interval_min=interval, checkpoint_write_s=30.0)
    sc = sc.replace(save_fail_p=p)
    got = _engine(sc, 2000, 3)
    g = got.hours["useful"] / sc.hours
    expected = _one_tier_goodput(sc, p)
    assert abs(g.mean() - expected) <= Z * g.std(ddof=1) / math.sqrt(len(g)), (g.mean(), expected)


def test_the_exact_fractions_are_the_closed_form_and_the_results_show_them():
    from planner_gui.core.theory.exact import exact_optimal_interval, time_fractions

    sc = Scenario(days=5.0, planned_per_day=0.0, checkpoint_interval_min=30.0, checkpoint_write_s=30.0)
    for p in (0.0, 0.2, 0.9):
        lam, tau = sc.failure_rate_per_hour, 0.5
        f = time_fractions(lam, 0.0, tau, 30.0 / 3600.0, sc.recovery_min / 60.0, sc.restart_min / 60.0, save_fail=p)
        assert float(f.useful) == pytest.approx(_one_tier_goodput(sc, p), rel=1e-12)
        total = f.useful + f.checkpoint + f.lost_work + f.recovery + f.planned
        assert float(total) == pytest.approx(1.0, abs=1e-12)
    # With planned interruptions (a drain keeps every cycle), the results show it beside the Monte Carlo.
    sc = Scenario(days=10.0, trials=1000, checkpoint_interval_min=60.0, checkpoint_write_s=30.0, save_fail_p=0.3)
    res = simulate(sc)
    assert res.engine == "general" and res.expected.goodput is not None
    g = res.goodput
    assert abs(g.mean() - res.expected.goodput) <= Z * g.std(ddof=1) / math.sqrt(len(g))
    lost = res.hours_per_trial()["lost_work"]
    exp = res.expected.hours()
    assert exp is not None and abs(lost.mean() - exp["lost_work"]) <= Z * lost.std(ddof=1) / math.sqrt(len(lost))
    # The exact optimum is shorter than without failed saves (more is lost per failure): near sqrt((1-p)/(1+p)).
    args = (sc.failure_rate_per_hour, sc.planned_per_day / 24.0, 30.0 / 3600.0, sc.recovery_min / 60.0,
            sc.restart_min / 60.0, (0.01, 1e3))  # fmt: skip
    plain, failing = exact_optimal_interval(*args), exact_optimal_interval(*args, save_fail=0.3)
    assert failing / plain == pytest.approx(math.sqrt(0.7 / 1.3), rel=0.05)
    assert res.optimal.exact == pytest.approx(60.0 * failing, rel=1e-6)
    # With the in-memory tier there is none.
    assert simulate(IM.replace(trials=20, days=1.0, save_fail_p=0.3)).expected.goodput is None


def test_the_closed_form_tells_the_failed_saves_apart():
    # (the check above can fail: at p = 0.5 the failed saves cost 1.3 points of goodput, 30 standard errors)
    sc = Scenario(days=5.0, planned_per_day=0.0, checkpoint_interval_min=60.0, checkpoint_write_s=30.0)
    assert _one_tier_goodput(sc, 0.0) - _one_tier_goodput(sc, 0.5) > 0.01


GRID = [
    ("16k one tier, planned",
     Scenario(days=3.0, checkpoint_interval_min=20.0, planned_per_day=6.0, save_fail_p=0.3), 250),
    (
        "16k same-domain, uploads, k=5",
        Scenario(days=2.0, checkpoint_interval_min=10.0, planned_per_day=4.0,
                 tiers=dataclasses.replace(SAME, persistent_upload_min=7.0), save_fail_p=0.25, restore_fail_p=0.3),
        250,
    ),
    (
        "100k in-memory, restores fail, no uploads",
        IM.replace(days=1.0, checkpoint_interval_min=20.0, tiers=dataclasses.replace(SAME, persistent_upload_min=0.0),
                   restore_fail_p=0.4, save_fail_p=0.1),
        150,
    ),
    (
        "100k in-memory + pool + continue, both fail",
        IM.replace(days=1.0, checkpoint_interval_min=30.0, tiers=SAME, save_fail_p=0.2, restore_fail_p=0.2,
                   spares=Spares(spare_nodes=60, recovery_mode="continue", swap_min=10.0)),
        120,
    ),
    (
        "16k one tier, uploads, 5 s stalls, pool",
        Scenario(days=2.0, checkpoint_interval_min=15.0, tiers=Tiers(persistent_upload_min=20.0), save_fail_p=0.4,
                 spares=Spares(spare_nodes=2, swap_min=20.0)),
        200,
    ),
]  # fmt: skip


@pytest.mark.parametrize("name,sc,ref_trials", GRID, ids=[g[0] for g in GRID])
def test_the_general_engine_agrees_with_the_reference_with_failing_checkpoints(name, sc, ref_trials):
    assert window_engine(sc).key == "general"
    counts = (*COUNTS, "promoted", "restores_failed") if sc.restore_fail_p > 0 else (*COUNTS, "promoted")
    got, ref, bad = against_reference(sc, ref_trials, 51, counts)
    assert not bad, "; ".join(bad)
    if sc.restore_fail_p > 0:
        assert ref.restores_failed is not None and ref.restores_failed.mean() > 0
        assert got.restores_failed is not None and got.restores_failed.mean() > 0


def test_the_time_to_train_with_failing_checkpoints_agrees_with_the_reference():
    sc = Scenario(
        checkpoint_interval_min=30.0,
        tiers=dataclasses.replace(SAME, fast_interval_min=5.0, persistent_upload_min=10.0),
        save_fail_p=0.3,
        restore_fail_p=0.5,
        training=Training(compute_gpu_hours=16_384 * 20.0),
    )
    assert train_engine(sc).key == "general"
    ref = simulate_reference(sc, 150, 61, training=True)
    res = simulate(sc.replace(trials=600, seed=62))
    assert res.time_to_train is not None and ref.train_hours is not None
    got = res.time_to_train.hours
    assert abs(_z(got, ref.train_hours)) <= Z, (got.mean(), ref.train_hours.mean())
    plain = simulate(sc.replace(trials=600, seed=62, save_fail_p=0.0, restore_fail_p=0.0))
    assert plain.time_to_train is not None
    assert got.mean() > plain.time_to_train.hours.mean()


def test_a_restore_that_always_fails_is_a_restore_from_storage_after_the_fast_one():
    # With every fast restore failing (p = 1) and a fast restore that takes no time, each restart returns to the
    # bank after the persistent restore: the very run in which every failure restores from storage (every cause a
    # domain's, with replicas in the same domain), draw for draw.
    tiers = dataclasses.replace(SAME, fast_restore_min=0.0)
    sc = IM.replace(days=1.0, trials=200, tiers=tiers, restore_fail_p=1.0)
    domains = tuple(dataclasses.replace(c, scope="domain") for c in IM.components)
    storage = IM.replace(days=1.0, trials=200, tiers=tiers, components=domains)
    a, b = simulate(sc), simulate(storage)
    for key in a.hours_keys:
        np.testing.assert_allclose(a.hours_per_trial()[key], b.hours_per_trial()[key], rtol=1e-9, atol=1e-9)
    ra, rb = a.to_json_dict()["restores"], b.to_json_dict()["restores"]
    assert ra["fast"] == rb["fast"] == 0.0 and ra["persistent"] == rb["persistent"]
    assert 0 < ra["failed"] < ra["persistent"]  # (a failure during a restore from storage is not a failed restore)
    # With a fast restore of its own, each failed one adds it: more recovery, the same failures.
    slow = simulate(sc.replace(tiers=dataclasses.replace(tiers, fast_restore_min=1.0)))
    assert slow.hours_per_trial()["recovery"].mean() > a.hours_per_trial()["recovery"].mean()


def test_off_by_default_every_number_is_todays():
    base = Scenario(trials=200, days=10.0)
    other = base.replace(restore_fail_p=0.5)  # no fast tier: no restore from it can fail
    a, b = simulate(base).to_json_dict(), simulate(other).to_json_dict()
    a.pop("scenario"), b.pop("scenario")
    assert a == b and "failed" not in a["restores"]
    assert window_engine(other).key == "renewal"
    # With a pool and the in-memory tier, on the general engine: a chance of 0 changes nothing.
    im = IM.replace(trials=100, days=2.0, spares=Spares(spare_nodes=60, swap_min=10.0))
    a = simulate(im).to_json_dict()
    b = simulate(im.replace(save_fail_p=0.0, restore_fail_p=0.0)).to_json_dict()
    a.pop("scenario"), b.pop("scenario")
    assert a == b and "failed" not in a["restores"]


def test_each_input_changes_its_own_quantity():
    sc = IM.replace(trials=200, days=2.0)
    plain = simulate(sc).to_json_dict()
    saves = simulate(sc.replace(save_fail_p=0.3)).to_json_dict()
    restores = simulate(sc.replace(restore_fail_p=0.3)).to_json_dict()
    # A failed save rolls further back: more lost work, the same failures, the same downtimes (almost: a few
    # restores go to storage when the bank is newer than the last snapshot saved).
    assert saves["hours"]["lost_work"] > 1.2 * plain["hours"]["lost_work"]
    assert saves["interruptions"]["mean"] == plain["interruptions"]["mean"]
    assert saves["restores"]["failed"] == 0.0
    # A failed restore: about 30 % of the fast restores fail, and recovery grows.
    r = restores["restores"]
    assert r["failed"] / (r["fast"] + r["failed"]) == pytest.approx(0.3, abs=0.03)
    assert restores["hours"]["recovery"] > plain["hours"]["recovery"]
    assert restores["hours"]["checkpoint"] <= plain["hours"]["checkpoint"]


def test_file_round_trip_and_flags(tmp_path, capsys):
    sc = IM.replace(save_fail_p=0.05, restore_fail_p=0.1)
    doc = scenario_to_dict(sc)
    assert doc["save_fail_p"] == 0.05 and doc["restore_fail_p"] == 0.1
    assert scenario_from_dict(json.loads(json.dumps(doc))) == sc
    assert "save_fail_p" not in scenario_to_dict(IM)
    with pytest.raises(ScenarioError, match="save_fail_p"):
        scenario_from_dict(doc | {"save_fail_p": 1.0})
    with pytest.raises(ScenarioError, match="restore_fail_p"):
        scenario_from_dict(doc | {"restore_fail_p": -0.1})
    rc = main(["run", "--preset", "h100-100k-inmemory", "--days", "1", "--trials", "40", "--save-fail-p", "0.1",
               "--restore-fail-p", "0.2", "--json"])  # fmt: skip
    assert rc == 0
    out = json.loads(capsys.readouterr().out)
    assert out["scenario"]["save_fail_p"] == 0.1 and out["restores"]["failed"] > 0
    rc = main(["run", "--preset", "llama3-405b", "--save-fail-p", "2"])
    assert rc != 0
    err = capsys.readouterr().err.strip()
    assert "--save-fail-p" in err and "\n" not in err and "Traceback" not in err


# -- the job's step, by hand (docs/model.md 2.1, 2.2): one column, points placed where the answer is plain ----------
def _column(sc: Scenario, fast_min: float | None, persistent_min: float):
    """A fresh job at t = 0 (progress 0 at a persistent point) and its step's flags."""
    m = sim_model(sc, fast_min, persistent_min, trials=1)
    st = job.initial_state(m, 1, 0.0, np.random.default_rng(0), steady=False, work=None, theta=np.ones(1),
                           blocked=np.zeros(1, dtype=bool))  # fmt: skip
    flags = job.Flags(window=True, uploads=m.upload > 0, waits=False, unit_k=m.k == 1, throughput=False,
                      swaps=False, continues=False, fast=m.restarts_fast, even=True, failing=True)  # fmt: skip
    return m, st, flags


def _to(st, flags, t: float, kind: int, back_snap: float = 0.0, back_up: float = 0.0, restore_fails: float = 0.0):
    one = np.ones(1)
    fail = (np.array([back_snap]), np.array([back_up]), np.array([restore_fails]))
    job.step(st, t * one, np.array([kind], dtype=np.int8), np.zeros(1, dtype=bool), one, np.zeros(1, dtype=bool),
             flags, 1e9, 1e9, None, None, fail)  # fmt: skip


def test_a_fast_restore_after_a_failed_save_resumes_the_count_at_the_snapshot_saved():
    # Snapshots every hour with no stall, every 2nd a persistent point (written at once): by 3.5 h three snapshots
    # (progress 1, 2, 3), the third failed to save: the fast tier holds 2, at count 0 of the pair (a persistent
    # point), not the job's count 1.
    tiers = Tiers(fast_enabled=True, fast_interval_min=60.0, fast_stall_s=0.0, persistent_upload_min=0.0,
                  fast_placement="same-domain")  # fmt: skip
    sc = Scenario(checkpoint_write_s=0.0, tiers=tiers, save_fail_p=0.5, components=IM.components[:1])
    _, st, flags = _column(sc, 60.0, 120.0)
    _to(st, flags, 3.5, CHANGE_KIND, back_snap=1.0)
    assert st[job.PSNAP, 0] == pytest.approx(2.0) and st[job.PBANK, 0] == pytest.approx(2.0)
    assert st[job.PHI, 0] == 1.0 and st[job.SPHI, 0] == 0.0
    _to(st, flags, 3.5, RESTART_FAST)
    assert st[job.P, 0] == pytest.approx(2.0) and st[job.PHI, 0] == 0.0
    # The persistent copy of the point at 2 h failed too: the bank stays at the start, newer is the snapshot.
    _, st, flags = _column(sc, 60.0, 120.0)
    _to(st, flags, 3.5, CHANGE_KIND, back_snap=0.0, back_up=1.0)
    assert st[job.PSNAP, 0] == pytest.approx(3.0) and st[job.PBANK, 0] == pytest.approx(0.0)
    # Every snapshot since failed, the bank's copy did not: the restore goes to storage (the bank is newer).
    _, st, flags = _column(sc, 60.0, 120.0)
    _to(st, flags, 3.5, CHANGE_KIND, back_snap=3.0)
    assert st[job.PSNAP, 0] == pytest.approx(0.0) and st[job.PBANK, 0] == pytest.approx(2.0)
    _to(st, flags, 3.5, RESTART_FAST)
    assert st[job.P, 0] == pytest.approx(2.0) and st[job.PEND, 0] == RESTART_PERSISTENT


def test_the_bank_is_the_last_upload_saved_the_one_in_flight_included():
    # One tier, a point every hour, uploads of 1.5 h (one every 2nd point): by 2.2 h the upload of the point at 1 h
    # flies (to 2.5 h). By 5.2 h it has finished, the point at 3 h's upload has finished (4.5 h) and the one at
    # 5 h flies: counted back from the last finished, 0 failed gives 3, 1 gives the one that flew (1), 2 none (0).
    sc = Scenario(checkpoint_write_s=0.0, tiers=Tiers(persistent_upload_min=90.0), save_fail_p=0.5)
    for back, bank in ((0.0, 3.0), (1.0, 1.0), (2.0, 0.0)):
        _, st, flags = _column(sc, None, 60.0)
        _to(st, flags, 2.2, CHANGE_KIND)
        assert st[job.UPEND, 0] == pytest.approx(2.5) and st[job.UPP, 0] == pytest.approx(1.0)
        _to(st, flags, 5.2, CHANGE_KIND, back_up=back)
        assert st[job.PBANK, 0] == pytest.approx(bank), back


# -- where the inputs show: levers, tornado, compare, report, the window ----------------------------------------------
def test_the_levers_halve_each_chance_and_rank_by_paired_monte_carlo():
    from planner_gui.core.analysis.sensitivity import has_closed_form, levers

    sc = IM.replace(save_fail_p=0.2, restore_fail_p=0.3)
    assert not has_closed_form(sc)  # (with the in-memory tier: none)
    assert has_closed_form(Scenario(save_fail_p=0.2))  # (one tier: docs/model.md 3)
    by_name = {lv.name: lv for lv in levers(sc)}
    assert by_name["failed saves"].apply(sc) == sc.replace(save_fail_p=0.1)
    assert by_name["failed restores from memory"].apply(sc) == sc.replace(restore_fail_p=0.15)
    names = {lv.name for lv in levers(IM)}
    assert "failed saves" not in names and "failed restores from memory" not in names
    # Without the in-memory tier, no restore from it fails: no lever for it.
    assert "failed restores from memory" not in {lv.name for lv in levers(Scenario(restore_fail_p=0.3))}


def test_the_tornado_brackets_the_chances_and_from_none_with_bounds():
    from planner_gui.core.analysis.tornado import tornado, unsure_inputs

    sc = IM.replace(save_fail_p=0.2, restore_fail_p=0.6)
    by_key = {u.key: u for u in unsure_inputs(sc)}
    assert (by_key["save_fail_p"].low, by_key["save_fail_p"].high) == (0.1, 0.4)
    assert (by_key["restore_fail_p"].low, by_key["restore_fail_p"].high) == (0.3, 1.0)  # (at most 1)
    assert by_key["save_fail_p"].at(sc, 0.1) == sc.replace(save_fail_p=0.1)
    keys = {u.key for u in unsure_inputs(Scenario())}
    assert "save_fail_p" not in keys and "restore_fail_p" not in keys  # (0: none assumed; only --bounds)
    assert "restore_fail_p" not in {u.key for u in unsure_inputs(Scenario(save_fail_p=0.1))}  # (no fast tier)
    t = tornado(Scenario(trials=150, days=5.0), {"save_fail_p": (0.0, 0.5)})
    assert t.exact  # (one tier: the closed form takes failed saves)
    bar = next(b for b in t.bars if b.input == "save_fail_p")
    assert bar.goodput_low == pytest.approx(simulate(Scenario(trials=10, days=5.0)).expected.goodput, rel=1e-12)
    high = simulate(Scenario(trials=10, days=5.0, save_fail_p=0.5)).expected.goodput
    assert bar.goodput_high == pytest.approx(high, rel=1e-12) and high < bar.goodput_low - 0.002
    t = tornado(IM.replace(trials=60, days=1.0), {"save_fail_p": (0.0, 0.5)})
    assert not t.exact  # (with the in-memory tier: every end simulated)


def test_compare_and_the_undo_name_the_chances():
    from planner_gui.core.analysis.compare import comparison, comparison_table
    from planner_gui.core.session.inputs import describe_changes

    a, b = IM.replace(trials=40, days=1.0), IM.replace(trials=40, days=1.0, save_fail_p=0.1, restore_fail_p=0.2)
    doc = comparison(["a", "b"], [a, b], [simulate(a).to_json_dict(), simulate(b).to_json_dict()])
    rows = {r["input"]: r["values"] for r in doc["inputs"]}
    assert rows["checkpoints that fail"] == ["off", "saves 10%, fast restores 20%"]
    assert "saves 10%, fast restores 20%" in comparison_table(doc)  # (whole: not cut to the table's width)
    out = {r["output"]: r["values"] for r in doc["outputs"]}
    assert out["fast restores failed"][0] is None and out["fast restores failed"][1] > 0
    assert describe_changes(a, b) == "failed saves 0 -> 0.1; failed fast restores 0 -> 0.2"


def test_the_report_gives_the_failed_restores_in_its_headline_and_the_chances_in_its_inputs_and_model():
    from test_report import DATE, lookup, parse, shown

    from planner_gui.core.session.plan import FULL, PlanRequest, compute_plan
    from planner_gui.report import render_report

    sc = IM.replace(trials=60, days=2.0, save_fail_p=0.05, restore_fail_p=0.2)
    plan = compute_plan(PlanRequest(sc, FULL))
    html = render_report(plan, generated=DATE)
    doc = plan.main.to_json_dict()
    row = next(r for r in parse(html).root.find("table", class_="headline").find_all("tr") if "Restores" in r.text())
    spans = row.find_all("span", class_="num")
    assert "restores/failed" in {s.attrs["data-key"] for s in spans}
    for span in spans:
        value, tol = shown(span.text(), span.attrs["data-unit"])
        assert value is not None and abs(value - lookup(doc, span.attrs["data-key"])) <= tol * (1 + 1e-9) + 1e-12
    assert "5 % of saves fail" in html and "20 % of restores from memory fail" in html
    assert "Checkpoints that fail</b>" in html
    plain = render_report(compute_plan(PlanRequest(IM.replace(trials=60, days=2.0), FULL)), generated=DATE)
    assert "failed its validation" not in plain


def test_the_window_group_sets_each_chance_alone(make_window, slide_alone):
    from PySide6.QtWidgets import QLabel

    win = make_window()
    note = win.findChild(QLabel, "failNote")
    assert note is not None and note.text().startswith("Off")
    for name, field in (("saveFailSlider", "save_fail_p"), ("restoreFailSlider", "restore_fail_p")):
        assert slide_alone(win, name, field, 300) > 0
    sc = win.scenario()
    # The default scenario has no in-memory tier: the note says a failed restore from it is unused.
    assert note.text() == (
        f"{100.0 * sc.save_fail_p:.3g}% of saves fail: the job keeps the checkpoint before each; failed restores "
        "from memory: unused, the in-memory tier is off"
    )
    # What the window shows is the scenario's: more work lost than without failed saves (the same seed).
    lost = win.plots.result.main.hours_per_trial()["lost_work"].mean()
    plain = simulate(sc.replace(save_fail_p=0.0, restore_fail_p=0.0, trials=win.plots.result.main.scenario.trials))
    assert lost > plain.hours_per_trial()["lost_work"].mean()


# -- from a fresh-eyes pass --------------------------------------------------------------------------------------
def test_a_chance_next_to_zero_changes_next_to_nothing():
    # A bank equal to the last snapshot (one point, its progress summed in two orders) is not newer than it: at a
    # chance of 1e-12 the run is the one at 0, draw for draw (it sent a quarter of the restores to storage).
    tiers = dataclasses.replace(IM.tiers, persistent_upload_min=0.05, fast_interval_min=0.77)
    sc = IM.replace(days=2.0, tiers=tiers, checkpoint_interval_min=0.77)
    base = _engine(sc, 200, 7)
    for change in ({"save_fail_p": 1e-12}, {"restore_fail_p": 1e-12}):
        got = _engine(sc.replace(**change), 200, 7)
        assert got.restores_persistent.sum() == base.restores_persistent.sum() == 0
        for key in base.hours:
            np.testing.assert_allclose(got.hours[key], base.hours[key], rtol=0, atol=1e-9)


def test_failed_restores_from_memory_make_the_persistent_tier_needed():
    from planner_gui.core.sim.tiers_run import plan_tiers

    # Every failure restores from memory (replicas in another domain): without failed restores the persistent tier is
    # never needed (banked daily by policy); with them a fifth of the failures go to storage, and it is.
    sc = Scenario(gpus=100_000, days=3.0, trials=100, tiers=Tiers(fast_enabled=True, fast_interval_min="optimal"))
    plain, plan = plan_tiers(sc), plan_tiers(sc.replace(restore_fail_p=0.2))
    assert plain.params.lam_persistent == 0.0 and plain.persistent_unneeded
    assert plan.params.lam_persistent == pytest.approx(0.2 * plain.params.lam_fast)
    assert plan.params.lam_fast == pytest.approx(0.8 * plain.params.lam_fast)
    assert not plan.persistent_unneeded and plan.persistent_min < 60.0
    # The optimal strategy no longer banks once a day: goodput of 67 %, not 4 %.
    assert simulate(sc.replace(restore_fail_p=0.2)).goodput.mean() > 0.6


def test_the_goodput_at_the_exact_optimum_counts_failed_saves():
    sc = Scenario(trials=100, days=5.0, save_fail_p=0.6)
    res = simulate(sc)
    d = res.to_json_dict()
    at_best = d["goodput_expected_at_optimal_interval"]
    assert at_best is not None and d["goodput_expected"] is not None
    exact_there = simulate(sc.replace(checkpoint_interval_min=res.optimal.exact)).expected.goodput
    assert at_best == pytest.approx(exact_there, rel=1e-9)
    assert at_best - d["goodput_expected"] > 0.005  # (Daly's interval, 'optimal', knows nothing of them)
    # With the in-memory tier there is no closed form, and none is claimed.
    assert simulate(IM.replace(trials=20, days=1.0, save_fail_p=0.3)).goodput_at_optimum() is None


def test_the_fast_optimum_counts_snapshots_that_fail():
    from planner_gui.core.sim.tiers_run import plan_tiers
    from planner_gui.core.theory.exact import exact_optimal_interval

    tiers = dataclasses.replace(IM.tiers, fast_interval_min="optimal")
    sc = IM.replace(tiers=tiers)
    plain, failing = plan_tiers(sc), plan_tiers(sc.replace(save_fail_p=0.3))
    tp = failing.params
    lam, r_planned = tp.lam_fast + tp.lam_persistent, sc.restart_at_size_min / 60.0
    exact = exact_optimal_interval(lam, tp.mu, tp.c, tp.r_fast, r_planned, (0.01 / 60.0, 525_600 / 60.0), 0.3)
    assert failing.optimal.fast_min == pytest.approx(60.0 * exact, rel=1e-6)
    assert failing.optimal.fast_min < 0.9 * plain.optimal.fast_min
    assert "failed saves counted" in failing.optimal.method and "failed saves" not in plain.optimal.method


def test_a_rare_failed_restore_moves_nothing_and_keeps_the_persistent_tier_daily():
    # From a second fresh-eyes pass: at a chance of 1e-9 Young's rule put the persistent tier every 41 days, and a
    # trial not followed until the bank passed the window's end counted the work above the bank as lost.
    sc = Scenario(gpus=100_000, days=2.0, trials=150, tiers=Tiers(fast_enabled=True, fast_interval_min="optimal"))
    from planner_gui.core.sim.tiers_run import plan_tiers

    plan = plan_tiers(sc.replace(restore_fail_p=1e-9))
    assert plan.persistent_min <= 1440.0 + plan.fast_min  # (daily, to a whole number of fast intervals)
    long = IM.replace(days=1.0, trials=150, checkpoint_interval_min=10_000.0)
    a, b = simulate(long), simulate(long.replace(restore_fail_p=1e-9))
    for key in a.hours_keys:
        np.testing.assert_allclose(a.hours_per_trial()[key], b.hours_per_trial()[key], rtol=0, atol=1e-9)
