"""Node lives that are not exponential (docs/model.md section 1, "Node lives"): a component whose failures come from
each of the job's node positions after a Weibull life, renewed at each failure, its rate the lives' long-run one.
Checked against renewal theory's closed forms (a stationary renewal process's mean count, a new cluster's renewal
function) and the event-by-event reference simulator; a shape of 1 is the Poisson class, and off by default every
number is today's."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from reference_model import simulate_reference
from test_sim import COUNTS, Z, _pool, _z, against_reference

from planner_gui.cli import main
from planner_gui.core.analysis.results import simulate
from planner_gui.core.files.presets import load_preset
from planner_gui.core.files.scenario_io import ScenarioError, scenario_from_dict, scenario_to_dict, validate
from planner_gui.core.model.scenario import Component, Scenario, Tiers, Training
from planner_gui.core.model.spares import Spares
from planner_gui.core.sim.capabilities import general_points, simulated_only, window_engine
from planner_gui.core.sim.model import sim_model
from planner_gui.core.sim.run import simulate_windows
from planner_gui.core.theory.profiles import expected_by_component, expected_per_day, weibull_renewal_function

#: 512 GPUs (64 nodes): "Faulty GPU" of lives whose scale the tests set, and a Poisson cause beside it.
BASE = Scenario(
    name="lives",
    gpus=512,
    days=3.0,
    checkpoint_interval_min=30.0,
    planned_per_day=2.0,
    components=(Component("Faulty GPU", "GPU", 1e-4), Component("Software Bug", "Software", 2e-4)),
)


def _lives(shape: float, scale: float = 150.0, sc: Scenario = BASE, **changes: object) -> Scenario:
    return sc.with_weibull((("Faulty GPU", shape, scale),)).replace(**changes)


def _sem(x: np.ndarray) -> float:
    return float(np.std(x, ddof=1) / math.sqrt(len(x)))


def _counts(sc: Scenario, trials: int = 1500, seed: int = 3, segments: int = 1) -> np.ndarray:
    m = sim_model(sc.replace(trials=trials, seed=seed), None, float(sc.checkpoint_interval_min), trials=trials)
    return np.asarray(simulate_windows([(m, trials, seed)], segments=segments)[0].by_component[:, 0])


def test_the_scale_gives_the_rate_and_the_rate_the_scale():
    sc = _lives(0.7, 200_000.0, Scenario())
    c = sc.components[0]
    assert c.name == "Faulty GPU" and sc.weibull == (("Faulty GPU", 0.7),)
    # N positions of mean life scale x Gamma(1 + 1/k) fail at N / mean per hour: the component's rate x G.
    mean = 200_000.0 * math.gamma(1.0 + 1.0 / 0.7)
    assert c.rate_per_gpu_hour * sc.gpus == pytest.approx(sc.job_nodes / mean, rel=1e-12)
    assert sc.weibull_scale_hours(c) == pytest.approx(200_000.0, rel=1e-12)
    assert sc.weibull_mean_life_hours(c) == pytest.approx(mean, rel=1e-12)
    # Only that component's rate moved; without a scale the rate stays and gives the scale.
    assert sc.components[1:] == Scenario().components[1:]
    kept = Scenario().with_weibull((("Faulty GPU", 0.7, None),))
    assert kept.components == Scenario().components and kept.uses_weibull
    # A shape of 1 is the exponential life of every other component: not a feature of its own.
    assert not Scenario().with_weibull((("Faulty GPU", 1.0, None),)).uses_weibull and not Scenario().uses_weibull


@pytest.mark.parametrize("shape", [0.5, 2.5])
def test_a_steady_cluster_fails_at_the_long_run_rate(shape):
    # A stationary renewal process counts t / mean on average whatever the life's law: N T / mean in all.
    sc = _lives(shape)
    got = _counts(sc)
    expected = sc.components[0].rate_per_gpu_hour * sc.gpus * sc.hours
    assert expected == pytest.approx(sc.job_nodes * sc.hours / sc.weibull_mean_life_hours(sc.components[0]))
    assert abs(got.mean() - expected) <= Z * _sem(got), (got.mean(), expected)
    assert expected_by_component(sc)[0] == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize("shape", [0.5, 2.5])
def test_a_new_cluster_fails_as_the_renewal_function_says(shape):
    # Every position new at 0: N M(T), M the renewal function of the lives (core/theory/profiles.py, Xie's scheme).
    sc = _lives(shape, new_cluster=True)
    got = _counts(sc)
    scale = sc.weibull_scale_hours(sc.components[0])
    expected = sc.job_nodes * float(weibull_renewal_function(shape, scale / 24.0, np.array([sc.days]))[0])
    assert abs(got.mean() - expected) <= Z * _sem(got), (got.mean(), expected)
    # Infant mortality fails more than the long run, wear-out less: the two differ by far more than the noise.
    steady = sc.components[0].rate_per_gpu_hour * sc.gpus * sc.hours
    assert (expected - steady) * (1.0 - shape) > 10 * _sem(got)
    assert expected_by_component(sc)[0] == pytest.approx(expected, rel=1e-9)
    # Day by day too: the days add up to the expectation, and each day's count agrees.
    per_day = expected_per_day(sc)
    assert per_day.sum() == pytest.approx(expected + expected_by_component(sc)[1], rel=1e-9)


def test_the_days_of_a_new_cluster_fall_as_its_nodes_age():
    # The first day's count (a window of one day) agrees with expected_per_day's first, which is well above its
    # fourth: infant mortality wears off as the nodes age.
    sc = _lives(0.5, new_cluster=True, days=4.0)
    per_day = expected_per_day(sc)
    first = _counts(sc.replace(days=1.0), 1500, 9)
    assert abs(first.mean() - (per_day[0] - expected_by_component(sc)[1] / 4.0)) <= Z * _sem(first)
    lived = expected_to_rows(sc)
    assert lived[0] > 1.5 * lived[-1]


def expected_to_rows(sc: Scenario) -> np.ndarray:
    """The lived class's expected failures in each day."""
    from planner_gui.core.theory.profiles import expected_to

    edges = np.arange(0.0, sc.hours + 1e-9, 24.0)
    return np.diff(expected_to(sc, edges)[0])


def test_a_shape_of_one_is_the_poisson_class():
    # The positions' lives exponential: the same law as the component's Poisson stream, checked on the count's mean
    # and its variance (a Poisson count's equals its mean), and on the goodput of the renewal closed form.
    sc = BASE.replace(components=BASE.components[:1], planned_per_day=0.0, days=2.0)
    lived = sc.replace(weibull=(("Faulty GPU", 1.0),))
    assert not lived.uses_weibull and window_engine(lived).key == "renewal"
    forced = sim_model(sc, None, 30.0)
    import dataclasses

    forced = dataclasses.replace(forced, shapes=np.array([1.0 - 1e-12]))  # (through the lives' code, shape ~ 1)
    got = simulate_windows([(forced, 3000, 5)])[0]
    n = got.by_component[:, 0]
    lam = sc.failure_rate_per_hour * sc.hours
    assert abs(n.mean() - lam) <= Z * math.sqrt(lam / len(n))
    assert abs(n.var(ddof=1) / lam - 1.0) <= Z * math.sqrt(2.0 / len(n))  # (the variance's relative s.e.)
    g = got.hours["useful"] / sc.hours
    ref = simulate(sc.replace(trials=600)).expected.goodput
    assert ref is not None and abs(g.mean() - ref) <= Z * _sem(g)


def test_infant_mortality_varies_the_count_more_than_poisson_and_wear_out_less():
    # In its steady state a position's renewals of a life of coefficient of variation c count with variance about
    # c^2 t / mean (renewal theory's central limit): above Poisson's below shape 1, below it above.
    for shape in (0.5, 3.0):
        sc = _lives(shape, 40.0, days=10.0)
        n = _counts(sc, 1500)
        mean_life = math.gamma(1 + 1 / shape)
        cv2 = math.gamma(1 + 2 / shape) / mean_life**2 - 1.0
        ratio = n.var(ddof=1) / n.mean()
        assert (ratio - 1.0) * (cv2 - 1.0) > 0, (shape, ratio, cv2)


GRID = [
    ("new, infant mortality, planned", _lives(0.5, new_cluster=True), 300),
    ("steady, infant mortality", _lives(0.5), 300),
    ("new, wear-out, pool", _lives(2.5, new_cluster=True, spares=_pool(4)), 300),
    ("steady, pool short", _lives(0.6, spares=_pool(3)), 300),
    (
        "steady, fast tier, profile, continue",
        _lives(
            0.7,
            rate_profile=((0.0, 2.0), (1.0, 0.5)),
            tiers=Tiers(
                fast_enabled=True, fast_interval_min=5.0, persistent_upload_min=3.0, fast_placement="same-domain"
            ),
            spares=Spares(spare_nodes=6, recovery_mode="continue", replica_gpus=64, swap_min=5.0),
        ),
        250,
    ),
    ("new, rate uncertainty, profile", _lives(0.6, new_cluster=True, rate_uncertainty=True,
                                              rate_profile=((0.0, 3.0), (0.5, 1.0))), 300),
]  # fmt: skip


@pytest.mark.parametrize("name,sc,ref_trials", GRID, ids=[g[0] for g in GRID])
def test_the_general_engine_agrees_with_the_reference_with_node_lives(name, sc, ref_trials):
    assert window_engine(sc).key == "general" and sc.uses_weibull
    got, ref, bad = against_reference(sc, ref_trials, 81, (*COUNTS, "promoted"))
    assert not bad, "; ".join(bad)
    a, b = got.by_component[:, 0], np.asarray(ref.by_component)[:, 0]
    assert abs(_z(a, b)) <= Z and a.mean() > 1


def test_the_rate_uncertainty_draws_each_trials_scale():
    # Each trial's rate from the posterior gives its own scale: the count's mean is the posterior mean's renewals
    # (expected_to's Gamma rule) and its spread is wider than at the mean rate.
    sc = _lives(0.6, new_cluster=True, rate_uncertainty=True)
    sc = sc.replace(
        components=(
            Component(
                "Faulty GPU", "GPU", sc.components[0].rate_per_gpu_hour, 6, 6 / sc.components[0].rate_per_gpu_hour
            ),
            *sc.components[1:],
        )
    )
    got = _counts(sc, 2000, 4)
    expected = expected_by_component(sc)[0]
    assert abs(got.mean() - expected) <= Z * _sem(got), (got.mean(), expected)
    fixed = _counts(sc.replace(rate_uncertainty=False), 2000, 4)
    assert got.var(ddof=1) > 1.5 * fixed.var(ddof=1)


def test_a_preview_cut_in_stretches_keeps_a_new_clusters_ages():
    # Each later stretch lives its positions' failures from the profile's 0 to its start first.
    sc = _lives(0.5, new_cluster=True, days=6.0)
    whole, cut = _counts(sc, 1200, 6), _counts(sc, 1200, 6, segments=12)
    assert abs(_z(whole, cut)) <= Z, (whole.mean(), cut.mean())


def test_a_time_to_train_on_a_new_cluster_agrees_with_the_reference():
    sc = _lives(0.5, new_cluster=True, training=Training(compute_gpu_hours=512 * 30.0))
    ref = simulate_reference(sc, 200, 91, training=True)
    res = simulate(sc.replace(trials=800, seed=92))
    assert res.time_to_train is not None and ref.train_hours is not None and res.engine == "general"
    assert abs(_z(res.time_to_train.hours, ref.train_hours)) <= Z
    # The lives' infant mortality costs time: the same run at the long-run rate trains sooner.
    steady = simulate(sc.replace(trials=800, seed=92, weibull=()))
    assert steady.time_to_train is not None
    assert res.time_to_train.hours.mean() > steady.time_to_train.hours.mean() + Z * _sem(res.time_to_train.hours)


def test_the_model_says_where_only_the_monte_carlo_answers_and_what_the_run_costs():
    sc = _lives(0.5, new_cluster=True)
    assert simulated_only(sc) == "node lives that are not exponential"
    assert general_points(sc) > general_points(sc.replace(weibull=())) * 1.5  # the early failures are counted


def test_the_inputs_go_through_files_flags_and_words(tmp_path, capsys):
    sc = _lives(0.7, 200_000.0, Scenario(), new_cluster=True)
    doc = scenario_to_dict(sc)
    assert doc["format_version"] == 2 and doc["weibull"]["Faulty GPU"]["shape"] == 0.7
    assert doc["weibull"]["Faulty GPU"]["scale_hours"] == pytest.approx(200_000.0, rel=1e-12)
    assert scenario_from_dict(doc) == sc and "weibull" not in scenario_to_dict(Scenario())
    assert validate(sc) == sc  # (the written scale gives back the very rate)
    # Without a scale the file keeps the component's rate.
    doc["weibull"] = {"Faulty GPU": {"shape": 2.0}}
    assert scenario_from_dict(doc).components == sc.components
    for bad, match in [
        (
            {"Faulty GPUs": {"shape": 0.7}},
            r"weibull\.Faulty GPUs: no component of that name .*did you mean 'Faulty GPU'",
        ),
        ({"Faulty GPU": {"shape": 0.1}}, r"weibull\.Faulty GPU\.shape: must be a number from 0\.3 to 10"),
        ({"Faulty GPU": {"shape": 0.7, "scale_hours": 0}}, r"weibull\.Faulty GPU\.scale_hours: must be a number"),
        ({"Faulty GPU": {"shape": 0.7, "life": 3}}, r"weibull\.Faulty GPU\.life: unknown key"),
        ({"Faulty GPU": 0.7}, r"weibull\.Faulty GPU: must be an object"),
        ([0.7], r"weibull: must be an object"),
    ]:
        doc["weibull"] = bad
        with pytest.raises(ScenarioError, match=match):
            scenario_from_dict(doc)
    # The flags: the JSON's node_lives, the run's line.
    assert main(["run", "--weibull", "Faulty GPU=0.7,200000", "--new-cluster", "--trials", "150", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    lives = d["node_lives"]["Faulty GPU"]
    assert lives["shape"] == 0.7 and lives["scale_hours"] == pytest.approx(200_000.0, rel=1e-9)
    assert lives["failures_expected"] > 4 * lives["failures_at_long_run_rate"]
    assert abs(lives["failures"]["mean"] - lives["failures_expected"]) <= Z * lives["failures"]["sem"]
    assert d["scenario"]["new_cluster"] is True and d["goodput_expected"] is None
    assert d["interruptions_expected"] == pytest.approx(sum(expected_by_component(sc)), rel=1e-9)
    assert main(["run", "--weibull", "Faulty GPU=0.7,200000", "--trials", "100"]) == 0
    out = capsys.readouterr().out
    assert "Node lives               Faulty GPU shape 0.7, scale 22.8 years (mean 28.9 years) per node" in out
    assert "nodes in their steady state" in out
    for args, message in [
        (["--weibull", "Faulty GPUs=0.7"], "--weibull Faulty GPUs: no component of that name in the scenario"),
        (["--weibull", "Faulty GPU=0.1"], "--weibull Faulty GPU.shape: must be a number from 0.3 to 10 (got 0.1)"),
        (["--weibull", "Faulty GPU=x"], "--weibull: Faulty GPU: the shape must be a number (got 'x')"),
        (["--weibull", "Faulty GPU"], "--weibull: give COMPONENT=SHAPE,SCALE_HOURS"),
        (["--weibull", "Faulty GPU=0.7", "--weibull", "Faulty GPU=0.8"], "--weibull Faulty GPU: given twice"),
    ]:
        assert main(["run", *args]) == 2
        err = capsys.readouterr().err.strip()
        assert message in err and "\n" not in err, err
    # The scale is at the size the flags give: --gpus first, whatever the order typed.
    path = tmp_path / "s.json"
    assert (
        main(["run", "--weibull", "Faulty GPU=2,50000", "--gpus", "100000", "--trials", "50", "--save", str(path)]) == 0
    )
    saved = json.loads(path.read_text())
    assert saved["weibull"]["Faulty GPU"]["scale_hours"] == pytest.approx(50_000.0, rel=1e-9)


def test_off_by_default_and_a_shape_of_one_change_nothing_but_the_line_that_says_so():
    sc = load_preset("h100-100k-inmemory").replace(trials=200, days=2.0)
    a = simulate(sc).to_json_dict()
    b = simulate(sc.replace(weibull=(("Faulty GPU", 1.0),))).to_json_dict()
    assert "node_lives" not in a and b["node_lives"]["Faulty GPU"]["shape"] == 1.0
    assert b["node_lives"]["Faulty GPU"]["failures"]["mean"] == b["by_component"]["Faulty GPU"]
    for d in (a, b):
        d.pop("scenario"), d.pop("node_lives", None)
    assert a == b


def test_the_optimal_intervals_see_a_new_clusters_lives_at_their_mean_rate_over_the_window():
    from planner_gui.core.theory.exact import daly_interval
    from planner_gui.core.theory.params import daly_minutes, optimal_intervals

    sc = _lives(0.5, 20_000.0, Scenario(), new_cluster=True)
    counts = expected_by_component(sc)
    lam = counts.sum() / sc.hours  # the window's mean rate: its expected failures over its hours
    assert lam > 1.5 * sc.failure_rate_per_hour
    expected = float(daly_interval(sc.write_s / 60.0, 60.0 / lam))
    assert daly_minutes(sc) == pytest.approx(expected, rel=1e-9)
    assert optimal_intervals(sc).daly == pytest.approx(expected, rel=1e-9)
    # In the steady state the lives fail at the long-run rate: the optimum is the exponential one's.
    steady = sc.replace(new_cluster=False)
    assert daly_minutes(steady) == pytest.approx(daly_minutes(steady.replace(weibull=())), rel=1e-12)
    # The Monte Carlo agrees that the shorter interval is better than the long-run rate's.
    at = simulate(sc.replace(trials=300, checkpoint_interval_min=expected)).goodput
    old = simulate(sc.replace(trials=300, checkpoint_interval_min=daly_minutes(sc.replace(new_cluster=False)))).goodput
    d = at - old  # (the same seed: paired trials)
    assert d.mean() > Z * _sem(d)


def test_one_gpu_is_on_the_jobs_footing_and_the_tornado_varies_the_shape(capsys):
    sc = _lives(0.5, 20_000.0, Scenario(), new_cluster=True)
    d = simulate(sc.replace(trials=100)).to_json_dict()
    assert d["gpu_mean_gap_hours"] == pytest.approx(d["mean_gap_hours"] * sc.gpus, rel=1e-12)
    assert d["gpu_mean_gap_hours"] < 0.6 * d["gpu_mtbf_hours"] and d["p_interrupted_expected"] is None
    from planner_gui.core.analysis.tornado import unsure_inputs

    (u,) = [u for u in unsure_inputs(sc) if u.key == "weibull.Faulty GPU.shape"]
    assert (u.low, u.value, u.high) == pytest.approx((0.4, 0.5, 0.625))
    low = u.at(sc, u.low)
    assert low.weibull == (("Faulty GPU", 0.4),) and low.components == sc.components  # (the rate kept)
    assert main(["run", "--weibull", "Faulty GPU=0.5,20000", "--new-cluster", "--trials", "100"]) == 0
    out = capsys.readouterr().out
    gap = sc.hours / expected_by_component(sc).sum()
    assert f"one GPU: {fmt_every(gap * sc.gpus)}" in out and "on average over the window" in out
    # A scale and --gpu-mtbf-hours both set the rate: refused, in one line.
    assert main(["run", "--weibull", "Faulty GPU=0.5,20000", "--gpu-mtbf-hours", "100000"]) == 2
    err = capsys.readouterr().err.strip()
    assert "a scale sets that component's rate, which --gpu-mtbf-hours sets too" in err and "\n" not in err


def fmt_every(hours: float) -> str:
    from planner_gui.core.util import fmt

    return fmt.every(hours)


def test_a_scale_reads_back_as_typed_and_one_the_rate_puts_out_of_range_is_left_to_the_rate():
    for shape, scale in [(1.0, 50_000.0), (0.3, 7_777.0), (0.7, 1e12)]:
        sc = _lives(shape, scale, Scenario())
        assert scenario_to_dict(sc)["weibull"]["Faulty GPU"]["scale_hours"] == scale
        assert validate(sc) == sc
    fast = Scenario(gpus=64, days=1.0).with_gpu_mtbf_hours(1.0).with_weibull((("Faulty GPU", 0.7, None),))
    assert fast.weibull_scale_hours(fast.components[0]) < 1.0
    assert "scale_hours" not in scenario_to_dict(fast)["weibull"]["Faulty GPU"] and validate(fast) == fast


def test_the_window_sets_node_lives_and_a_new_cluster_and_says_what_they_mean(make_window, qtbot):
    from PySide6.QtWidgets import QCheckBox, QLabel, QLineEdit

    win = make_window()
    box = win.findChild(QLineEdit, "weibullEdit")
    error, note = win.findChild(QLabel, "weibullError"), win.findChild(QLabel, "livesNote")
    check = win.findChild(QCheckBox, "newClusterCheck")
    assert box is not None and error is not None and note is not None and check is not None
    assert box.text() == "" and not check.isChecked() and note.text().startswith("Exponential")
    before = win.scenario()
    box.setText("Faulty GPU=0.7,200000")
    box.editingFinished.emit()
    qtbot.waitUntil(lambda: not win.compute.busy and win.results_current(), timeout=60_000)
    sc = win.scenario()
    # The box changed the lives and the named component's rate (from its scale), nothing else.
    assert sc.weibull == (("Faulty GPU", 0.7),) and sc.components[1:] == before.components[1:]
    assert sc.replace(name=before.name, weibull=(), components=before.components) == before
    assert sc.weibull_scale_hours(sc.components[0]) == pytest.approx(200_000.0, rel=1e-9)
    assert "shape 0.7, scale 22.8 years (mean 28.9 years) per node" in note.text() and "steady state" in note.text()
    assert "none (node lives that are not exponential" in win.summary.goodput.detail.text()
    # The text shown (scales to six digits) entered again changes nothing.
    box.editingFinished.emit()
    assert win.scenario() == sc
    # Refused input says why and keeps the scenario.
    box.setText("Faulty GPUs=0.7")
    box.editingFinished.emit()
    assert error.isVisibleTo(win) and "no component of that name" in error.text() and win.scenario() == sc
    # The new cluster: on, the note says so; the rate's a control of its own and moves the scale.
    check.setChecked(True)
    assert win.scenario().replace(name=sc.name) == sc.replace(new_cluster=True)  # (that, and nothing else)
    assert win.scenario().new_cluster and "every node new and none in repair" in note.text()
    qtbot.waitUntil(lambda: not win.compute.busy and win.results_current(), timeout=60_000)
    win.inputs.set_multiplier("Faulty GPU", 2.0 * win.inputs.multiplier("Faulty GPU"))
    moved = win.scenario()
    assert moved.weibull_scale_hours(moved.components[0]) == pytest.approx(100_000.0, rel=1e-6)
    assert box.text() == "Faulty GPU=0.7,100000"
    # Emptied, the lives are exponential again; undo brings them back.
    box.setText("")
    box.editingFinished.emit()
    assert win.scenario().weibull == () and win.scenario().components == moved.components
    win.inputs.undo()
    assert win.scenario().weibull == (("Faulty GPU", 0.7),) and box.text() == "Faulty GPU=0.7,100000"


@pytest.mark.parametrize("shape", [1.5, 2.5, 5.0, 10.0])
def test_the_renewal_function_of_wear_out_lives_agrees_with_simulated_renewals(shape):
    # Renewals of unit-scale lives counted directly (20,000 paths), from half a life to 80 lives: the wear-out
    # grid's 64 steps a life, and the slope of 1 / mean past 62 lives.
    from planner_gui.core.theory.renewal import weibull_renewal_function

    rng = np.random.default_rng(7)
    for t in (0.5, 3.0, 13.0, 80.0):
        lives = rng.weibull(shape, size=(20_000, int(3 * t) + 20))
        counts = (np.cumsum(lives, axis=1) <= t).sum(axis=1)
        got = float(weibull_renewal_function(shape, 1.0, np.array([t]))[0])
        assert abs(got - counts.mean()) <= Z * _sem(counts) + 1e-3, (shape, t, got, counts.mean())


def test_a_wear_out_new_cluster_is_run_and_counted_right():
    # Lives of 100 h of shape 5 for 40 days: about 10 lives a node (where a grid fit for infant mortality counted
    # twice the failures and could not size the run at all).
    sc = _lives(5.0, 100.0, BASE.replace(days=40.0), new_cluster=True)
    assert window_engine(sc).key == "general"
    got = _counts(sc, 300, 2)
    expected = expected_by_component(sc)[0]
    assert abs(got.mean() - expected) <= Z * _sem(got) + 1e-3 * expected, (got.mean(), expected)


def test_a_study_that_varies_a_shape_keeps_the_rate():
    from planner_gui.core.study.spec import apply_values, input_of

    base = scenario_to_dict(_lives(0.7, 200_000.0, Scenario(), new_cluster=True))
    inp = input_of("weibull.Faulty GPU.shape", [0.5, 1.0], base)
    for shape in (0.5, 1.0):
        sc = scenario_from_dict(apply_values(base, (inp,), (shape,)))
        assert sc.weibull == (("Faulty GPU", shape),)
        assert sc.components[0].rate_per_gpu_hour == pytest.approx(
            scenario_from_dict(base).components[0].rate_per_gpu_hour, rel=1e-12
        )


def test_the_report_and_compare_put_one_gpu_on_the_windows_footing():
    from planner_gui.core.analysis.compare import _one_gpu_text
    from planner_gui.core.util import fmt
    from planner_gui.report.document import components_html

    sc = _lives(0.5, 20_000.0, Scenario(), new_cluster=True)
    n = float(expected_by_component(sc).sum())
    assert _one_gpu_text(sc) == fmt.every(sc.hours * sc.gpus / n) + " on average over the window"
    assert _one_gpu_text(sc.replace(new_cluster=False)) == fmt.every(sc.gpu_mtbf_hours)
    d = simulate(sc.replace(trials=50)).to_json_dict()
    html = components_html(sc, d)
    assert f"{fmt.duration_hours(sc.hours * sc.gpus / n)} over the window" in html
