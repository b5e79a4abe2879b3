"""Detection by cause (docs/model.md 2.2): a failure is noticed after its component's own detection time, else its
category's, else the scenario's. Checked against the event-by-event reference simulator, against the one detection of
before where every cause has the same, and through the flags, the file, the lever and the window."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest
from reference_model import simulate_reference
from test_sim import Z, _z, against_reference

from planner_gui.cli import main
from planner_gui.core.analysis.results import simulate
from planner_gui.core.analysis.sensitivity import levers
from planner_gui.core.files.presets import load_preset
from planner_gui.core.files.scenario_io import ScenarioError, scenario_from_dict, scenario_to_dict, validate
from planner_gui.core.model.scenario import Scenario, Training
from planner_gui.core.model.spares import Spares
from planner_gui.core.session.inputs import describe_changes, detect_by_entry, parse_detect_by
from planner_gui.core.sim.capabilities import window_engine
from planner_gui.core.sim.model import sim_model
from planner_gui.core.sim.run import simulate_windows

BY = (("NCCL Watchdog Timeouts", 15.0), ("GPU", 0.1))


def test_each_cause_takes_its_own_detection_else_its_categorys_else_the_scenarios():
    sc = Scenario(detect_by=(*BY, ("Faulty GPU", 2.0)))
    by_name = {c.name: c for c in sc.components}
    assert sc.detect_min_of(by_name["NCCL Watchdog Timeouts"]) == 15.0
    assert sc.detect_min_of(by_name["Faulty GPU"]) == 2.0  # its own before its category's
    assert sc.detect_min_of(by_name["GPU HBM3 Memory"]) == 0.1  # a GPU cause: its category's
    assert sc.detect_min_of(by_name["Software Bug"]) == 5.0  # the scenario's
    assert sc.uses_detect_by and window_engine(sc).key == "general"
    same = Scenario(detect_by=(("GPU", 5.0),))  # the one detection of before: today's engine and numbers
    assert not same.uses_detect_by and window_engine(same).key == "renewal"


def test_every_cause_at_one_time_is_the_one_detection_of_before_to_the_last_digit():
    """Every category named at 2 min gives, draw for draw, what a detection of 2 min gives on the same engine."""
    base = load_preset("h100-100k-inmemory").replace(days=3.0, spares=Spares(spare_nodes=70, swap_min=10.0))
    by_all = base.replace(detect_by=tuple((cat, 2.0) for cat in base.categories))
    plain = base.replace(detect_min=2.0)
    a = simulate_windows([(sim_model(by_all, 5.0, 60.0, trials=80), 80, 3)])[0]
    b = simulate_windows([(sim_model(plain, 5.0, 60.0, trials=80), 80, 3)])[0]
    for key in a.hours:
        np.testing.assert_allclose(a.hours[key], b.hours[key], rtol=1e-12, atol=1e-9, err_msg=key)
    np.testing.assert_array_equal(a.restores_fast, b.restores_fast)


GRID = [
    ("16k: hangs found late, GPU errors at once", Scenario(days=4.0, checkpoint_interval_min=20.0, detect_by=BY), 250),
    (
        "16k: every network cause at 30 min, planned often",
        Scenario(days=3.0, checkpoint_interval_min=30.0, planned_per_day=12.0, detect_by=(("Network", 30.0),))
        .scale_rates(3.0),
        200,
    ),
    (
        "100k in-memory + pool + continue + swap",
        load_preset("h100-100k-inmemory").replace(
            days=1.0, checkpoint_interval_min=60.0, detect_by=(*BY, ("Software Bug", 12.0)),
            spares=Spares(spare_nodes=60, recovery_mode="continue", swap_min=10.0),
        ),
        120,
    ),
]  # fmt: skip


@pytest.mark.parametrize("name,sc,ref_trials", GRID, ids=[g[0] for g in GRID])
def test_the_general_engine_agrees_with_the_reference_with_detection_by_cause(name, sc, ref_trials):
    if sc.tiers is not None:
        sc = sc.replace(tiers=dataclasses.replace(sc.tiers, fast_interval_min=5.0))
    _, _, bad = against_reference(sc, ref_trials, 51)
    assert not bad, "; ".join(bad)


def test_a_time_to_train_with_detection_by_cause_agrees_with_the_reference():
    sc = Scenario(
        checkpoint_interval_min=30.0, detect_by=(("GPU", 45.0),), training=Training(compute_gpu_hours=16_384 * 20.0)
    )
    ref = simulate_reference(sc, 150, 61, training=True)
    res = simulate(sc.replace(trials=600, seed=62))
    assert res.time_to_train is not None and ref.train_hours is not None
    assert abs(_z(res.time_to_train.hours, ref.train_hours)) <= Z


def test_recovery_moves_with_each_causes_detection_as_a_hand_count_says():
    """Rare failures (about 30 in the window, restarts of 10 min): recovery is nearly the sum over causes of their
    count x (their detection + restart); the GPU causes detected at once save 5 min each."""
    base = Scenario(days=54.0, trials=400, checkpoint_interval_min=30.0).scale_rates(0.07)
    quick = base.replace(detect_by=(("GPU", 0.0),))
    a, b = simulate(base).to_json_dict(), simulate(quick).to_json_dict()
    gpu = sum(v for k, v in b["by_component"].items() if k in {c.name for c in base.components if c.category == "GPU"})
    saved = a["hours"]["recovery"] - b["hours"]["recovery"]
    assert saved == pytest.approx(gpu * 5.0 / 60.0, rel=0.1)
    assert b["goodput"]["mean"] > a["goodput"]["mean"] and b["goodput_expected"] is None


def test_the_inputs_go_through_files_flags_words_and_the_lever(capsys):
    sc = Scenario(detect_by=BY)
    doc = scenario_to_dict(sc)
    assert doc["format_version"] == 2 and doc["detect_by"] == dict(BY)
    assert scenario_from_dict(doc) == sc and "detect_by" not in scenario_to_dict(Scenario())
    with pytest.raises(ScenarioError, match=r"detect_by\.Cosmic rays: no component or category"):
        validate(sc.replace(detect_by=(("Cosmic rays", 3.0),)))
    with pytest.raises(ScenarioError, match=r"detect_by\.GPU: must be a number of minutes"):
        validate(sc.replace(detect_by=(("GPU", 20_000.0),)))
    assert parse_detect_by(detect_by_entry(BY)) == BY and parse_detect_by("  ") == ()
    with pytest.raises(ValueError, match="NAME=MINUTES"):
        parse_detect_by("GPU 3")
    assert describe_changes(Scenario(), sc) == "detection by cause none -> NCCL Watchdog Timeouts=15; GPU=0.1"
    for bad, words in (("GPU=1, Network=2", "separate entries with ';'"), ("GPU=1; GPU=2", "GPU: given twice"),
                       ("GPU=1_0", "minutes must be a number")):  # fmt: skip
        with pytest.raises(ValueError, match=words):
            parse_detect_by(bad)
    lever = next(lv for lv in levers(sc) if lv.name == "detection")
    assert lever.apply(sc) == sc.replace(detect_min=2.5, detect_by=(("NCCL Watchdog Timeouts", 7.5), ("GPU", 0.05)))
    argv = ["run", "--detect-by", "NCCL Watchdog Timeouts=15", "--detect-by", "GPU=0.1", "--trials", "50", "--json"]
    assert main(argv) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["scenario"]["detect_by"] == dict(BY) and out["goodput_expected"] is None
    for bad, words in (("Cosmic rays=3", "--detect-by Cosmic rays: no component"), ("GPU", "give NAME=MINUTES"),
                       ("GPU=-1", "--detect-by GPU: must be a number of minutes"),
                       ("GPU=1,Network=2", "separate entries with ';'")):  # fmt: skip
        assert main(["run", "--detect-by", bad]) == 2
        err = capsys.readouterr().err
        assert words in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_the_window_box_sets_detection_by_cause_and_says_why_it_refuses(make_window, qtbot):
    from PySide6.QtWidgets import QLabel, QLineEdit

    win = make_window()
    box = win.findChild(QLineEdit, "detectByEdit")
    error = win.findChild(QLabel, "detectByError")
    assert box is not None and error is not None and box.text() == ""
    before = win.scenario()
    box.setText("NCCL Watchdog Timeouts=15; GPU=0.1")
    box.editingFinished.emit()
    qtbot.waitUntil(lambda: not win.compute.busy and win.results_current(), timeout=60_000)
    assert win.scenario().replace(name=before.name) == before.replace(detect_by=BY)
    assert "none (detection by cause" in win.summary.goodput.detail.text()
    box.setText("Cosmic rays=3")
    box.editingFinished.emit()
    assert error.isVisibleTo(win) and "Cosmic rays: no component or category" in error.text()
    assert win.scenario().detect_by == BY  # refused: the scenario keeps what it had
    box.setText("GPU=2")
    box.setFocus()
    box.editingFinished.emit()
    assert win.scenario().detect_by == (("GPU", 2.0),)
    win.inputs.undo()  # with the box still focused, it shows what is in force again
    assert win.scenario().detect_by == BY and box.text() == detect_by_entry(BY)
    win.inputs.undo()
    assert win.scenario().detect_by == () and box.text() == ""
    # The filter finds the box with its label.
    win.controls.filter.setText("cause")
    qtbot.waitUntil(lambda: box.isVisibleTo(win) and not win.findChild(QLabel, "slowNote").isVisibleTo(win))


def test_the_tornados_detection_moves_every_cause_in_proportion():
    from planner_gui.core.analysis.tornado import unsure_inputs

    sc = Scenario(detect_by=BY)
    u = next(u for u in unsure_inputs(sc) if u.key == "detect_min")
    assert u.label == "detection (every cause)" and (u.low, u.high) == (2.5, 10.0)
    assert u.at(sc, 10.0) == sc.replace(detect_min=10.0, detect_by=(("NCCL Watchdog Timeouts", 30.0), ("GPU", 0.2)))
    assert next(u for u in unsure_inputs(Scenario()) if u.key == "detect_min").label == "detection"
