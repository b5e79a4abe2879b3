"""Silent data corruption found late (docs/model.md section 1 and 2.2, "A corruption found"): a failure of the
component named Silent Data Corruption starts a corruption, found an exponential delay of mean ``sdc_detect_hours``
later; the job then rolls back to the newest clean persistent save of the last ``retained_checkpoints`` (the run
starts over when none is kept). Checked against closed forms for one tier, against the event-by-event reference
simulator elsewhere; off by default, every number is today's."""

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
from planner_gui.core.model.scenario import SDC_NAME, Component, Scenario
from planner_gui.core.model.spares import Spares
from planner_gui.core.sim.capabilities import window_engine
from planner_gui.core.util import fmt


def _boosted(sc: Scenario, times: float) -> Scenario:
    """The scenario with its silent corruptions ``times`` as frequent (so that a short window sees many)."""
    comps = tuple(
        dataclasses.replace(c, rate_per_gpu_hour=c.rate_per_gpu_hour * times) if c.name == SDC_NAME else c
        for c in sc.components
    )
    return sc.replace(components=comps)


BASE = _boosted(Scenario(name="sdc", gpus=16_384, days=6.0, checkpoint_interval_min=60.0), 30.0)
IM = load_preset("h100-100k-inmemory").tiers
assert IM is not None
TIERS = dataclasses.replace(IM, fast_interval_min=5.0)

GRID = [
    ("every checkpoint kept", BASE.replace(sdc_detect_hours=6.0), 500),
    ("4 kept", BASE.replace(sdc_detect_hours=6.0, retained_checkpoints=4), 500),
    ("8 kept, saves that fail", BASE.replace(sdc_detect_hours=3.0, retained_checkpoints=8, save_fail_p=0.3), 500),
    (
        "in-memory tier, uploads, saves that fail",
        BASE.replace(
            checkpoint_interval_min=30.0, tiers=TIERS, sdc_detect_hours=2.0, retained_checkpoints=6, save_fail_p=0.2
        ),
        300,
    ),
    (
        "continue mode and a pool, planned drains",
        BASE.replace(
            sdc_detect_hours=4.0,
            retained_checkpoints=5,
            planned_per_day=2.0,
            spares=Spares(spare_nodes=16, swap_min=10.0, recovery_mode="continue", replica_gpus=1024),
        ),
        300,
    ),
    (
        "GB200 racks with warm spares, node lives",
        _boosted(load_preset("gb200-nvl72-16k"), 30.0).replace(
            days=2.5, checkpoint_interval_min=30.0, sdc_detect_hours=3.0, retained_checkpoints=10,
            weibull=((SDC_NAME, 0.7),),
        ),
        150,
    ),
]  # fmt: skip


@pytest.mark.parametrize("name,sc,ref_trials", GRID, ids=[g[0] for g in GRID])
def test_the_general_engine_agrees_with_the_reference(name, sc, ref_trials):
    got, ref, bad = against_reference(sc, ref_trials, 31, COUNTS)
    assert got.sdc_found is not None and got.sdc_unrecoverable is not None
    for label, a, b in (
        ("found", got.sdc_found, ref.sdc_found),
        ("unrecoverable", got.sdc_unrecoverable, ref.sdc_unrecoverable),
        ("sdc_rollback", got.hours["sdc_rollback"], ref.hours["sdc_rollback"]),
    ):
        if a.std() + b.std() > 0 and abs(_z(a, b)) > Z:
            bad.append(f"{label}: engine {a.mean():.4g} reference {b.mean():.4g}")
    assert not bad, "; ".join(bad)
    assert got.hours["sdc_rollback"].mean() > 0.2 * sc.hours  # (the grid's corruptions are frequent: they matter)


def _lone(rate_per_hour: float, **changes: object) -> Scenario:
    """A job whose only failures are silent corruptions, ``rate_per_hour`` of them, without planned interruptions:
    the closed forms of docs/model.md 3 hold."""
    gpus = 1024
    comp = Component(SDC_NAME, "GPU", rate_per_gpu_hour=rate_per_hour / gpus)
    sc = Scenario(
        gpus=gpus, days=100.0, components=(comp,), planned_per_day=0.0, checkpoint_interval_min=60.0,
        checkpoint_write_s=30.0, trials=2000, seed=5,
    )  # fmt: skip
    return sc.replace(**changes)


def _ratio(num: np.ndarray, den: np.ndarray) -> tuple[float, float]:
    """The ratio of the sums over trials and its standard error (delta method over trials)."""
    r = float(num.sum() / den.sum())
    return r, float(np.sqrt(((num - r * den) ** 2).sum()) / den.sum())


def test_a_corruption_found_rolls_back_its_delay_and_the_work_since_the_last_checkpoint():
    d = 3.0
    sc = _lone(5e-4, sdc_detect_hours=d)
    res = simulate(sc)
    assert res.engine == "general" and res.sdc_found is not None and res.sdc_hours is not None
    tau, c = 1.0, 30.0 / 3600.0
    s = tau + c
    expected = (tau * tau / 2.0 + c * tau + d * tau) / s
    got, se = _ratio(res.sdc_hours, res.sdc_found.astype(float))
    assert se < 0.02 * expected
    assert abs(got - expected) <= Z * se, (got, expected, se)
    # Found at once the same corruptions lose only the work since the last checkpoint (tau / 2 on average).
    now = simulate(sc.replace(sdc_detect_hours=0.0))
    assert now.sdc_hours is None and now.engine != "general"
    lost_each, _ = _ratio(now.hours_per_trial()["lost_work"], now.trials.unplanned.astype(float))
    assert lost_each == pytest.approx((tau * tau / 2.0 + c * tau) / s, rel=0.1)
    assert got > 5.0 * lost_each


@pytest.mark.parametrize("kept", [1, 3])
def test_the_share_found_with_no_clean_checkpoint_kept_is_the_closed_form(kept):
    sc = _lone(5e-4, sdc_detect_hours=2.0, retained_checkpoints=kept)
    res = simulate(sc)
    assert res.sdc_found is not None and res.sdc_unrecoverable is not None
    got, se = _ratio(res.sdc_unrecoverable.astype(float), res.sdc_found.astype(float))
    expected = sc.sdc_unkept_share(60.0)
    s, d = 1.0 + 30.0 / 3600.0, 2.0
    assert expected == pytest.approx(math.exp(-(kept - 1) * s / d) * (d / s) * (1.0 - math.exp(-s / d)), rel=1e-12)
    assert abs(got - expected) <= Z * se, (got, expected, se)
    # The fewest kept for at most 5 % with none clean: the share is at most that there, above it with one fewer.
    enough = sc.sdc_kept_for(0.05, 60.0)
    assert sc.replace(retained_checkpoints=enough).sdc_unkept_share(60.0) <= 0.05
    assert enough == 1 or sc.replace(retained_checkpoints=enough - 1).sdc_unkept_share(60.0) > 0.05
    # Starting over loses the window's work so far: a kept checkpoint more gives most of it back.
    more = simulate(sc.replace(retained_checkpoints=kept + 4))
    assert more.goodput.mean() > res.goodput.mean() + Z * res.goodput.std(ddof=1) / math.sqrt(len(res.goodput))


def test_off_by_default_and_checkpoints_kept_alone_change_nothing():
    sc = Scenario(days=6.0, trials=200, spares=Spares(spare_nodes=64, swap_min=10.0))
    assert not sc.uses_sdc and sc.retained_checkpoints == 0
    base = simulate(sc)
    kept = simulate(sc.replace(retained_checkpoints=5))
    assert base.engine == kept.engine == "general"
    np.testing.assert_array_equal(base.goodput, kept.goodput)
    for key, v in base.hours_per_trial().items():
        np.testing.assert_array_equal(v, kept.hours_per_trial()[key])
    d = base.to_json_dict()
    assert "sdc" not in d and "sdc_rollback" not in d["hours"]
    assert "sdc_detect_hours" not in scenario_to_dict(sc)


def test_the_run_command_gives_the_contract_and_a_line(capsys):
    args = ["run", "--days", "20", "--trials", "100", "--sdc-detect-hours", "24", "--retained-checkpoints", "30"]
    assert main([*args, "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["hours"]["sdc_rollback"] > 0
    assert set(d["hours"]) >= {"useful", "lost_work", "sdc_rollback"}
    assert sum(d["hours"].values()) == pytest.approx(20 * 24.0, rel=1e-9)
    sdc = d["sdc"]
    assert sdc["detect_hours"] == 24.0 and sdc["retained_checkpoints"] == 30
    assert sdc["found"]["mean"] > 0 and sdc["rollback_hours"]["mean"] == pytest.approx(d["hours"]["sdc_rollback"])
    assert d["scenario"]["sdc_detect_hours"] == 24.0 and d["scenario"]["retained_checkpoints"] == 30
    assert main(args) == 0
    text = capsys.readouterr().out
    assert "Silent corruption" in text and "found 24.0 h late on average" in text and "corruption rollbacks" in text


def test_bad_input_is_refused_in_one_line(capsys):
    assert main(["run", "--retained-checkpoints", "4"]) == 2
    err = capsys.readouterr().err.strip()
    assert "--retained-checkpoints" in err and "--sdc-detect-hours" in err and "\n" not in err
    assert main(["run", "--sdc-detect-hours", "-1"]) == 2
    assert "--sdc-detect-hours" in capsys.readouterr().err
    doc = scenario_to_dict(Scenario(components=(Component("Faulty GPU", "GPU", 1e-5),), sdc_detect_hours=5.0))
    with pytest.raises(ScenarioError, match="sdc_detect_hours: no component is named 'Silent Data Corruption'"):
        scenario_from_dict(doc)


def test_a_scenario_file_keeps_the_inputs():
    sc = Scenario(sdc_detect_hours=12.5, retained_checkpoints=7)
    again = scenario_from_dict(json.loads(json.dumps(scenario_to_dict(sc))))
    assert again.sdc_detect_hours == 12.5 and again.retained_checkpoints == 7
    assert window_engine(again).key == "general"


def test_a_time_to_train_agrees_with_the_reference_and_pays_for_its_corruptions():
    from planner_gui.core.model.scenario import Training
    from planner_gui.core.sim.model import sim_model
    from planner_gui.core.sim.run import simulate_train

    sc = BASE.replace(sdc_detect_hours=4.0, retained_checkpoints=6, training=Training(compute_gpu_hours=16_384 * 72.0))
    ref = simulate_reference(sc, 300, 41, training=True)
    work = 72.0
    got = simulate_train([(sim_model(sc.replace(trials=1500, seed=42), None, 60.0, trials=1500), 1500, 42, work)])[0]
    assert np.all(got >= work - 1e-9)
    assert abs(_z(got, ref.train_hours)) < Z, (got.mean(), ref.train_hours.mean())
    at_once = simulate_train([(sim_model(sc.replace(sdc_detect_hours=0.0), None, 60.0, trials=1500), 1500, 42, work)])
    assert got.mean() > at_once[0].mean() + 10.0  # (about 12 corruptions over the run, each hours of work more)


def test_corruptions_stay_paired_when_other_inputs_change():
    """A Poisson class's corruptions come from a stream of their own, drawn in blocks of the profile's clock: a paired
    comparison (sensitivity, the tornado) that changes another rate keeps them, and so its spread."""
    sc = BASE.replace(sdc_detect_hours=5.0)
    a = _engine(sc, 200, 3)
    b = _engine(sc.scale_rates(0.5, "Host").replace(planned_per_day=0.5 * sc.planned_per_day), 200, 3)
    i = [c.name for c in sc.failure_components].index(SDC_NAME)
    np.testing.assert_array_equal(a.by_component[:, i], b.by_component[:, i])
    host = [j for j, c in enumerate(sc.failure_components) if c.category == "Host"]
    assert a.by_component[:, host].sum() > 1.5 * b.by_component[:, host].sum()  # (the other rate did change)
    ga, gb = a.hours["useful"] / sc.hours, b.hours["useful"] / sc.hours
    assert (gb - ga).std() < 0.5 * math.sqrt(ga.var() + gb.var())


def test_the_window_group_sets_each_input_alone_and_says_what_it_does(make_window, slide_alone, qtbot):
    from PySide6.QtWidgets import QLabel

    win = make_window()
    note = win.findChild(QLabel, "sdcNote")
    assert note is not None
    assert note.text().startswith("Off: 6.0 silent corruptions expected in the window (Silent Data Corruption)")
    delay = slide_alone(win, "sdcDetectSlider", "sdc_detect_hours", 200)
    assert delay > 0 and f"each found {fmt.duration_hours(delay)} after it starts on average" in note.text()
    assert "every checkpoint kept" in note.text()
    kept = slide_alone(win, "retainedCheckpointsSlider", "retained_checkpoints", 150)
    sc = win.scenario()
    assert kept >= 1 and sc.retained_checkpoints == kept
    share = sc.sdc_unkept_share(win.inputs.interval_minutes())
    assert f"about {fmt.percent(share, 0)} of them come {kept:,} saves or more after they start (were" in note.text()
    # What the window shows is the scenario's: its corruptions are in the results it draws and in its hours.
    qtbot.waitUntil(lambda: not win.compute.busy and win.results_current(), timeout=60_000)
    d = win.plots.result.main.to_json_dict()
    assert d["sdc"]["detect_hours"] == pytest.approx(delay) and d["sdc"]["retained_checkpoints"] == kept
    assert "sdc_rollback" in d["hours"]
    # ... and Where the time goes draws their row, by its label.
    assert "sdc_rollback" in win.plots._breakdown_shown
    assert "corruption rollbacks" in win.plots._breakdown_labels
    # Without the component nothing is found late: the note says so.
    win.inputs.update(components=tuple(c for c in sc.components if c.name != SDC_NAME))
    assert note.text().startswith("No component is named Silent Data Corruption")


@pytest.mark.parametrize(
    "extra",
    [
        ["--spare-nodes", "40"],
        ["--recovery-mode", "continue", "--replica-gpus", "1024"],
        ["--preset", "gb200-nvl72-16k"],
    ],
)
def test_every_report_shows_the_rollbacks_and_its_hours_add_up(capsys, extra):
    args = ["run", *extra, "--days", "10", "--trials", "60", "--sdc-detect-hours", "24"]
    assert main([*args, "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["hours"]["sdc_rollback"] > 0 and d["hours"]["sdc_rollback"] == pytest.approx(
        d["sdc"]["rollback_hours"]["mean"]
    )
    assert sum(d["hours"].values()) == pytest.approx(10 * 24.0, rel=1e-9)
    assert main(args) == 0
    assert "corruption rollbacks" in capsys.readouterr().out


def test_a_run_started_over_too_often_is_refused_at_once(capsys):
    from planner_gui.core.analysis.results import start_over_rate

    args = ["run", "--mfu", "0.4", "--sdc-detect-hours", "24", "--retained-checkpoints", "3"]
    assert main(args) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("planner-gui: error: retained_checkpoints: the run would never finish") and "\n" not in err
    sc = Scenario(sdc_detect_hours=24.0, retained_checkpoints=3)
    comp = sc.sdc_component
    assert comp is not None
    rate = comp.rate_per_gpu_hour * sc.gpus  # (no profile: the window's mean rate)
    assert start_over_rate(sc, 5.5) == pytest.approx(rate * sc.sdc_unkept_share(5.5), rel=1e-12)
    assert start_over_rate(sc.replace(retained_checkpoints=0), 5.5) == 0.0


def test_compare_and_the_tornado_name_the_inputs():
    from planner_gui.core.analysis.compare import input_differences
    from planner_gui.core.analysis.tornado import unsure_inputs

    a, b = Scenario(), Scenario(sdc_detect_hours=24.0, retained_checkpoints=50)
    rows = dict(input_differences([a, b, a.replace(retained_checkpoints=7)]))
    shown = ["found at once", "24.0 h late, keep 50", "found at once, keep 7"]
    assert rows["silent corruption (found after, kept)"] == shown
    keys = {u.key for u in unsure_inputs(b)}
    assert "sdc_detect_hours" in keys
    at_zero = {u.key: u for u in unsure_inputs(a, {"sdc_detect_hours": (0.0, 48.0)})}
    assert (at_zero["sdc_detect_hours"].low, at_zero["sdc_detect_hours"].high) == (0.0, 48.0)
    assert "sdc_detect_hours" not in {u.key for u in unsure_inputs(a)}  # (at 0 only --bounds gives its ends)
