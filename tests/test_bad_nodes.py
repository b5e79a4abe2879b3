"""Bad nodes and misdiagnosis (docs/model.md section 1, "Bad nodes"): a share of the job's nodes and the pool's is bad
at the job's start and fails ``bad_multiplier`` times as often by the causes that take one node; a node failure
pulls the failed node with the chance ``diagnosis_p``, else a healthy one; a bad node's repair leaves it bad with the
chance ``repair_fail_p``; its replacement is bad with the pool's share. Checked against the closed form of the
expectations with an unlimited pool, against the event-by-event reference simulator elsewhere; off by default, every
number is today's."""

from __future__ import annotations

import dataclasses
import itertools
import json
import math

import numpy as np
import pytest
from reference_model import simulate_reference
from test_sim import COUNTS, Z, _z, against_reference

from planner_gui.cli import main
from planner_gui.core.analysis.results import simulate
from planner_gui.core.files.presets import load_preset
from planner_gui.core.files.scenario_io import ScenarioError, scenario_from_dict, scenario_to_dict
from planner_gui.core.model.scenario import Scenario, Training
from planner_gui.core.model.spares import Spares
from planner_gui.core.sim.capabilities import general_points, window_engine
from planner_gui.core.theory.bad_nodes import bad_classes, bad_exact, bad_expected, bad_rates, closed_form_holds


def _boosted(sc: Scenario, times: float) -> Scenario:
    """The scenario with every component ``times`` as frequent (so that a short window sees many failures)."""
    comps = tuple(dataclasses.replace(c, rate_per_gpu_hour=c.rate_per_gpu_hour * times) for c in sc.components)
    return sc.replace(components=comps)


BASE = _boosted(Scenario(name="bad", gpus=4096, days=8.0, checkpoint_interval_min=60.0), 5.0)
IM = load_preset("h100-100k-inmemory").tiers
assert IM is not None
TIERS = dataclasses.replace(IM, fast_interval_min=10.0)

GRID = [
    ("unlimited pool, misdiagnosis", BASE.replace(bad_share=0.2, bad_multiplier=8.0, diagnosis_p=0.7), 400),
    (
        "finite pool, failed repairs, swap",
        BASE.replace(
            bad_share=0.2, bad_multiplier=8.0, diagnosis_p=0.8, repair_fail_p=0.4,
            spares=Spares(spare_nodes=24, swap_min=10.0),
        ),
        400,
    ),
    (
        "continue mode, small pool, new cluster",
        BASE.replace(
            bad_share=0.3, bad_multiplier=6.0, diagnosis_p=0.6, repair_fail_p=0.5, new_cluster=True,
            spares=Spares(spare_nodes=8, swap_min=10.0, recovery_mode="continue", replica_gpus=512),
        ),
        300,
    ),
    (
        "in-memory tier, rate uncertainty",
        BASE.replace(
            checkpoint_interval_min=30.0, tiers=TIERS, bad_share=0.15, bad_multiplier=10.0, diagnosis_p=0.9,
            repair_fail_p=0.2, rate_uncertainty=True, spares=Spares(spare_nodes=40),
        ),
        300,
    ),
]  # fmt: skip

BAD_COUNTS = ("bad_failures", "misdiagnosed", "bad_fixed", "bad_end")


@pytest.mark.parametrize("name,sc,ref_trials", GRID, ids=[g[0] for g in GRID])
def test_the_general_engine_agrees_with_the_reference(name, sc, ref_trials):
    got, ref, bad = against_reference(sc, ref_trials, 51, COUNTS)
    for key in BAD_COUNTS:
        a, b = getattr(got, key), getattr(ref, key)
        assert a is not None and b is not None
        if abs(_z(a, b)) > Z:
            bad.append(f"{key}: engine {np.mean(a):.4g} reference {np.mean(b):.4g}")
    assert not bad, "; ".join(bad)
    # (the grid's bad nodes matter: many of the failures are theirs, and some pulls are wrong)
    assert got.bad_failures.mean() > 0.25 * got.node_failures.mean()
    assert got.misdiagnosed.mean() > 1.0


def _lone(**changes: object) -> Scenario:
    """Llama 3's 16,384 GPUs for 54 days with a bad batch: 15 % bad, 5x, the right node pulled 80 % of the time."""
    sc = Scenario(trials=1500, seed=7, bad_share=0.15, bad_multiplier=5.0, diagnosis_p=0.8)
    return sc.replace(**changes)


def _mean_se(a: np.ndarray) -> tuple[float, float]:
    a = np.asarray(a, dtype=float)
    return float(a.mean()), float(a.std(ddof=1) / math.sqrt(len(a)))


@pytest.mark.parametrize("changes", [{}, {"diagnosis_p": 0.5, "bad_multiplier": 12.0}, {"new_cluster": True}])
def test_with_an_unlimited_pool_the_expectations_are_the_closed_form(changes):
    sc = _lone(**changes)
    res = simulate(sc)
    assert res.engine == "general" and res.bad_failures is not None and res.bad_end is not None
    assert not np.isnan(res.bad_end).any()  # (every trial found its bad nodes at the window's end)
    d = res.to_json_dict()
    # The closed form, by hand: E[B](h) = B_inf + (B0 - B_inf) e^(-k h), the extra failures (M - 1) lam int E[B].
    rates = np.array([c.rate_per_gpu_hour for c in sc.failure_components])
    lam = float(bad_rates(sc, rates).sum())
    n, s, m, p, t = sc.job_nodes, sc.bad_share, sc.bad_multiplier, sc.diagnosis_p, sc.hours
    k = lam * (m * p - (m - 1.0) * s)
    b0, b_inf = round(s * n), lam * s * n / k
    area = b_inf * t + (b0 - b_inf) * (1.0 - math.exp(-k * t)) / k
    assert d["bad"]["bad_failures_expected"] == pytest.approx(m * lam * area, rel=1e-12)
    assert d["bad"]["bad_at_end_expected"] == pytest.approx(b_inf + (b0 - b_inf) * math.exp(-k * t), rel=1e-12)
    assert res.expected.unplanned == pytest.approx(sc.failure_rate_per_hour * t + (m - 1.0) * lam * area, rel=1e-9)
    for label, got, want in (
        ("interruptions", res.trials.unplanned, res.expected.unplanned),
        ("bad failures", res.bad_failures, d["bad"]["bad_failures_expected"]),
        ("bad at the end", res.bad_end, d["bad"]["bad_at_end_expected"]),
    ):
        mean, se = _mean_se(got)
        assert abs(mean - want) <= Z * se, (label, mean, want, se)
    # Each node failure of a bad class pulls a healthy node instead with the chance 1 - p.
    mask = bad_classes(sc)
    pulls = res.trials.by_component[:, mask].sum(axis=1).astype(float)
    mis = res.misdiagnosed.astype(float)
    share = mis.sum() / pulls.sum()
    assert abs(share - (1.0 - p)) <= Z * math.sqrt(p * (1.0 - p) / pulls.sum()), share
    assert d["spares"]["misdiagnosed"]["mean"] == pytest.approx(mis.mean())


def test_a_finite_pools_mean_equations_are_close_and_said_to_be_approximate(capsys):
    sc = _lone(repair_fail_p=0.3, spares=Spares(spare_nodes=64))
    e = bad_expected(sc, 1e-4, np.array([100.0]))
    assert not e.exact
    res = simulate(sc)
    mean, se = _mean_se(res.trials.unplanned)
    # (the mean equations' error is about 1 / (N s) of the extra failures: well inside the sampling error here)
    extra = res.expected.unplanned - sc.failure_rate_per_hour * sc.hours
    assert abs(mean - res.expected.unplanned) <= Z * se + extra / (sc.job_nodes * sc.bad_share)
    d = res.to_json_dict()
    assert d["bad"]["bad_failures_expected"] is None and d["bad"]["bad_at_end_expected"] is None
    assert d["spares"]["p_no_spare_expected"] is None  # (bad nodes' failures are no Poisson stream)
    assert main(["run", "--bad-share", "0.15", "--spare-nodes", "64", "--trials", "50"]) == 0
    assert "expected about" in capsys.readouterr().out


def test_a_right_diagnosis_and_a_repair_that_works_buy_goodput_back():
    sc = _lone(trials=600, repair_fail_p=0.5, spares=Spares(spare_nodes=32))
    worst = simulate(sc.replace(diagnosis_p=0.3))
    better = simulate(sc)
    best = simulate(sc.replace(diagnosis_p=1.0, repair_fail_p=0.0))
    none = simulate(sc.replace(bad_share=0.0))
    goodputs = [r.goodput for r in (worst, better, best, none)]
    for lo, hi in itertools.pairwise(goodputs):
        assert hi.mean() - lo.mean() > Z * math.sqrt((hi.var(ddof=1) + lo.var(ddof=1)) / len(hi))
    # A misdiagnosis leaves the bad node in the job: more of them at the end.
    assert worst.bad_end is not None and better.bad_end is not None
    assert worst.bad_end.mean() > better.bad_end.mean()


def test_off_by_default_and_the_other_inputs_alone_change_nothing():
    sc = Scenario(days=6.0, trials=200, spares=Spares(spare_nodes=64, swap_min=10.0))
    assert not sc.uses_bad
    base = simulate(sc)
    alone = simulate(sc.replace(bad_multiplier=9.0, diagnosis_p=0.4, repair_fail_p=0.5))
    assert base.engine == alone.engine == "general"
    np.testing.assert_array_equal(base.goodput, alone.goodput)
    for key, v in base.hours_per_trial().items():
        np.testing.assert_array_equal(v, alone.hours_per_trial()[key])
    d = base.to_json_dict()
    assert "bad" not in d and "misdiagnosed" not in d["spares"]
    assert "bad_share" not in scenario_to_dict(sc)
    # Without a pool a run without bad nodes has no spares section.
    assert "spares" not in simulate(Scenario(days=6.0, trials=50)).to_json_dict()


def test_the_run_command_gives_the_contract_and_a_line(capsys):
    args = ["run", "--days", "20", "--trials", "100", "--bad-share", "0.15", "--bad-multiplier", "6"]
    args += ["--diagnosis-p", "0.8", "--repair-fail-p", "0.24"]
    assert main([*args, "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["spares"]["misdiagnosed"]["mean"] > 0
    bad = d["bad"]
    assert (bad["share"], bad["multiplier"], bad["diagnosis_p"], bad["repair_fail_p"]) == (0.15, 6.0, 0.8, 0.24)
    assert bad["bad_at_start"] == round(0.15 * 2048)
    assert bad["bad_failures"]["mean"] > 0 and bad["fixed"]["mean"] > 0
    assert d["scenario"]["bad_share"] == 0.15 and d["scenario"]["diagnosis_p"] == 0.8
    assert d["p_interrupted_expected"] is None
    assert main(args) == 0
    text = capsys.readouterr().out
    assert "Bad nodes" in text and "15% of nodes bad at the start, failing 6x as often" in text
    assert "healthy nodes pulled instead" in text and "nodes bad at the end" in text


def test_bad_input_is_refused_in_one_line(capsys):
    for flag, value in (("--diagnosis-p", "0.5"), ("--repair-fail-p", "0.2"), ("--bad-multiplier", "3")):
        assert main(["run", flag, value]) == 2
        err = capsys.readouterr().err.strip()
        assert flag in err and "--bad-share" in err and "\n" not in err
    # (their defaults, said with a share of 0, are no mistake)
    assert main(["run", "--bad-share", "0", "--diagnosis-p", "1", "--bad-multiplier", "5", "--trials", "20"]) == 0
    capsys.readouterr()
    # A share too small to make one bad node is refused, naming the least that does.
    assert main(["run", "--bad-share", "0.0001"]) == 2
    err = capsys.readouterr().err.strip()
    assert "no bad node" in err and f"{1 / 2048:.3g}" in err
    for flag, value in (("--bad-share", "1.5"), ("--bad-multiplier", "0.5"), ("--diagnosis-p", "-0.1")):
        assert main(["run", "--bad-share", "0.1", flag, value]) == 2
        err = capsys.readouterr().err.strip()
        assert flag in err and "\n" not in err
    doc = scenario_to_dict(load_preset("gb200-nvl72-16k").replace(bad_share=0.1))
    with pytest.raises(ScenarioError, match="bad_share: bad nodes are not modelled on NVLink racks"):
        scenario_from_dict(doc)


def test_a_scenario_file_keeps_the_inputs():
    sc = Scenario(bad_share=0.12, bad_multiplier=7.5, diagnosis_p=0.85, repair_fail_p=0.3)
    again = scenario_from_dict(json.loads(json.dumps(scenario_to_dict(sc))))
    assert (again.bad_share, again.bad_multiplier, again.diagnosis_p, again.repair_fail_p) == (0.12, 7.5, 0.85, 0.3)
    assert window_engine(again).key == "general"


def test_a_time_to_train_agrees_with_the_reference_and_pays_for_its_bad_nodes():
    from planner_gui.core.sim.model import sim_model
    from planner_gui.core.sim.run import simulate_train

    sc = GRID[1][1].replace(training=Training(compute_gpu_hours=4096 * 100.0))
    ref = simulate_reference(sc, 300, 61, training=True)
    work = 100.0
    got = simulate_train([(sim_model(sc.replace(trials=1500, seed=62), None, 60.0, trials=1500), 1500, 62, work)])[0]
    assert abs(_z(got, ref.train_hours)) < Z, (got.mean(), ref.train_hours.mean())
    good = simulate_train(
        [(sim_model(sc.replace(trials=1500, seed=62, bad_share=0.0), None, 60.0, trials=1500), 1500, 62, work)]
    )[0]
    assert got.mean() - good.mean() > Z * math.sqrt((got.var() + good.var()) / 1500)


def test_the_optimal_interval_takes_the_bad_nodes_mean_rate():
    sc = _lone()
    plain = simulate(sc.replace(bad_share=0.0, trials=20))
    res = simulate(sc.replace(trials=20))
    # Daly's interval at the window's mean rate: the expected failures over the window's hours.
    rate = res.expected.unplanned / sc.hours
    assert res.optimal.daly < plain.optimal.daly
    young = math.sqrt(2.0 * sc.write_s / 60.0 * 60.0 / rate)
    assert res.optimal.young == pytest.approx(young, rel=1e-6)


@pytest.mark.parametrize("diagnosis", [1.0, 0.6])
def test_with_no_spare_the_job_gets_its_own_node_back(diagnosis):
    # A pool of 0: the pulled node comes back to its own place. Repairs that always fail keep every bad node bad (and
    # a healthy node pulled comes back healthy): the bad count never moves. Repairs that always work only lower it.
    sc = BASE.replace(days=3.0, trials=200, bad_share=0.2, bad_multiplier=8.0, diagnosis_p=diagnosis)
    sc = sc.replace(spares=Spares(spare_nodes=0))
    start = round(0.2 * sc.job_nodes)
    stuck = simulate(sc.replace(repair_fail_p=1.0))
    assert stuck.bad_end is not None and stuck.bad_fixed is not None
    np.testing.assert_array_equal(stuck.bad_end, start)
    assert not stuck.bad_fixed.any()
    fixed = simulate(sc.replace(repair_fail_p=0.0))
    assert fixed.bad_end is not None and fixed.bad_fixed is not None
    assert np.all(fixed.bad_end <= start) and fixed.bad_end.mean() < start - 5
    np.testing.assert_array_equal(fixed.bad_end, start - fixed.bad_fixed)


def test_the_window_group_sets_each_input_alone_and_says_what_it_does(make_window, slide_alone, qtbot):
    from PySide6.QtWidgets import QLabel

    from planner_gui.core.theory.profiles import bad_window

    win = make_window(load_preset("llama3-405b").replace(trials=200, days=20.0), restore=False)
    note = win.findChild(QLabel, "badNote")
    assert note is not None and note.text().startswith("Off:")
    share = slide_alone(win, "badShareSlider", "bad_share", 300)
    sc = win.scenario()
    assert share > 0 and sc.uses_bad
    e = bad_window(sc)
    start = round(share * sc.job_nodes)
    assert note.text().startswith(f"{start:,} of the {sc.job_nodes:,} nodes bad at the start, failing 5x as often")
    assert f"{e.extra[0]:,.1f} more failures in the window" in note.text()
    mult = slide_alone(win, "badMultiplierSlider", "bad_multiplier", 100)
    assert f"failing {mult:g}x as often" in note.text()
    diag = slide_alone(win, "diagnosisSlider", "diagnosis_p", -200)
    assert diag < 1.0 and "of pulls take a healthy node" in note.text()
    slide_alone(win, "repairFailSlider", "repair_fail_p", 200)
    # What the window shows is the scenario's: its bad nodes are in the results it draws.
    qtbot.waitUntil(lambda: not win.compute.busy and win.results_current(), timeout=60_000)
    d = win.plots.result.main.to_json_dict()
    assert d["bad"]["share"] == pytest.approx(share) and d["bad"]["multiplier"] == pytest.approx(mult)
    assert d["spares"]["misdiagnosed"]["mean"] > 0
    assert d["interruptions_expected"] == pytest.approx(win.plots.result.main.expected.unplanned)


def test_where_no_healthy_node_is_left_the_expectations_are_the_mean_equations_and_said_so(capsys):
    # Every node bad: a misdiagnosis finds no healthy node to pull, so the failed one is pulled whatever the chance
    # of a right pull. The closed form does not hold (it would grow without end); the mean equations, with that edge,
    # give the same expectations as a right pull every time, and the optimal interval with them.
    sc = Scenario(days=10.0, trials=300, seed=9, bad_share=1.0, bad_multiplier=20.0, repair_fail_p=1.0)
    wrong, right = simulate(sc.replace(diagnosis_p=0.0)), simulate(sc)
    assert not bad_exact(sc.replace(diagnosis_p=0.0)) and bad_exact(sc)
    assert wrong.expected.unplanned == pytest.approx(right.expected.unplanned, rel=1e-6)
    assert wrong.optimal.daly == pytest.approx(right.optimal.daly, rel=1e-6)
    for res in (wrong, right):
        mean, se = _mean_se(res.trials.unplanned)
        assert abs(mean - res.expected.unplanned) <= Z * se, (mean, res.expected.unplanned, se)
    d = wrong.to_json_dict()
    assert d["bad"]["bad_failures_expected"] is None and d["bad"]["bad_at_end_expected"] is None
    # A share that grows toward the edge (k < 0) is no closed form either: "expected about".
    grows = _lone(diagnosis_p=0.0, trials=100)
    assert not closed_form_holds(grows, 1e-4)
    assert main(["run", "--bad-share", "0.5", "--diagnosis-p", "0", "--trials", "50"]) == 0
    assert "expected about" in capsys.readouterr().out


def test_the_size_estimate_counts_the_bad_nodes_failures():
    sc = Scenario(gpus=100_000, trials=100)
    worst = sc.replace(bad_share=1.0, bad_multiplier=100.0)
    ratio = general_points(worst) / general_points(sc)
    assert ratio > 50.0  # (every node-taking failure of the window 100 times as often)


def test_a_failed_repair_is_no_lever_with_an_unlimited_pool():
    from planner_gui.core.analysis.sensitivity import levers
    from planner_gui.core.analysis.tornado import unsure_inputs

    sc = _lone(repair_fail_p=0.3)
    assert "failed repairs" not in [lv.name for lv in levers(sc)]
    assert "repair_fail_p" not in [u.key for u in unsure_inputs(sc)]
    pooled = sc.replace(spares=Spares(spare_nodes=64))
    assert "failed repairs" in [lv.name for lv in levers(pooled)]
    assert "repair_fail_p" in [u.key for u in unsure_inputs(pooled)]


def test_the_window_note_says_about_wherever_the_expectations_are_approximate():
    from planner_gui.ui.controls import _bad_note

    sc = _lone()
    assert "about" not in _bad_note(sc)
    for approximate in (sc.replace(rate_uncertainty=True), sc.replace(spares=Spares(spare_nodes=64))):
        assert not bad_exact(approximate)
        assert "about" in _bad_note(approximate)
    assert _bad_note(sc.replace(bad_share=0.0)).startswith("Off:")
