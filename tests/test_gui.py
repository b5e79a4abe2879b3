"""The desktop window, driven headless with pytest-qt: controls, files, computing, closing."""

from __future__ import annotations

import dataclasses
import json
import math
import os
import stat
import subprocess
import sys
from pathlib import Path

import numpy as np
import pyqtgraph as pg
import pytest
from PySide6.QtCore import QSettings, Qt
from PySide6.QtWidgets import QAbstractSlider, QApplication, QLabel, QMessageBox

from planner_gui.core.files.presets import load_preset
from planner_gui.core.files.scenario_io import dumps, load, save
from planner_gui.core.util import fmt
from planner_gui.ui import MainWindow
from planner_gui.ui.compute import FULL, PREVIEW
from planner_gui.ui.widgets import _GPU_LANDMARKS, significant

ROOT = Path(__file__).resolve().parent.parent
SLIDERS = [
    "gpuCountSlider",
    "daysSlider",
    "plannedSlider",
    "checkpointIntervalSlider",
    "checkpointWriteSlider",
    "detectSlider",
    "restartSlider",
    "restartGrowthSlider",
    "allRatesSlider",
]
PLOTS = [
    "interruptionsVsGpusPlot",
    "goodputVsGpusPlot",
    "goodputVsIntervalPlot",
    "componentsPlot",
    "goodputHistogramPlot",
    "timeBreakdownPlot",
]


def find(win: MainWindow, cls, name: str):
    w = win.findChild(cls, name)
    assert w is not None, name
    return w


def settle(qtbot, win: MainWindow) -> None:
    """Wait until the full results for the current inputs are shown."""
    qtbot.waitUntil(lambda: not win.compute.busy and win.results_current(), timeout=60_000)


def test_default_window_has_the_named_widgets(make_window):
    win = make_window()
    assert win.scenario() == load_preset("llama3-405b")
    for name in SLIDERS:
        assert isinstance(find(win, QAbstractSlider, name), QAbstractSlider)
    for comp in win.scenario().components:
        assert isinstance(find(win, QAbstractSlider, f"componentSlider:{comp.name}"), QAbstractSlider)
    for name in PLOTS:
        assert isinstance(find(win, pg.PlotWidget, name), pg.PlotWidget)
    assert "419" in win.summary.interruptions.value.text()
    assert "3.1 hours" in win.summary.every.value.text()
    assert not win.dirty and not win.banner.isVisible()


@pytest.mark.parametrize(
    "name,field,unit_factor",
    [
        ("restartSlider", "restart_min", 1),
        ("checkpointWriteSlider", "checkpoint_write_s", 1),
        ("detectSlider", "detect_min", 1),
        ("daysSlider", "days", 1),
        ("plannedSlider", "planned_per_day", 1),
    ],
)
def test_each_slider_changes_its_field_only_and_the_results(make_window, qtbot, name, field, unit_factor):
    win = make_window()
    before_sc = win.scenario()
    before_curve = win.plots.curve_data("goodputVsGpusPlot")[1].copy()
    before_text = win.summary.goodput.value.text() + win.summary.goodput.detail.text()
    slider = find(win, QAbstractSlider, name)
    slider.setValue(slider.value() + 200)
    settle(qtbot, win)
    after_sc = win.scenario()
    shown = win.controls.values[field].spin.value()
    assert getattr(after_sc, field) == pytest.approx(shown, rel=1e-9) and getattr(after_sc, field) != getattr(
        before_sc, field
    )
    for other in (
        "gpus",
        "days",
        "planned_per_day",
        "checkpoint_write_s",
        "detect_min",
        "restart_min",
        "restart_per_log2_gpus_min",
        "components",
        "trials",
        "seed",
    ):
        if other != field:
            assert getattr(after_sc, other) == getattr(before_sc, other), other
    assert not np.allclose(win.plots.curve_data("goodputVsGpusPlot")[1], before_curve)
    assert win.summary.goodput.value.text() + win.summary.goodput.detail.text() != before_text
    assert win.dirty and win.windowTitle().startswith("untitled *")


def test_the_recovery_group_says_the_restart_in_use_at_the_current_size(make_window, qtbot):
    """With Restart growth on, the restart the engines take moves with the GPU count: the window says it."""
    win = make_window()
    note = find(win, QLabel, "restartInUseNote")
    assert note.text() == "Restart in use: 5 min at every size"
    before_sc, before_text = win.scenario(), win.summary.goodput.value.text() + win.summary.goodput.detail.text()
    before_curve = win.plots.curve_data("goodputVsGpusPlot")[1].copy()
    slider = find(win, QAbstractSlider, "restartGrowthSlider")
    slider.setValue(slider.value() + 200)
    settle(qtbot, win)
    growth = win.scenario().restart_per_log2_gpus_min
    assert growth == pytest.approx(win.controls.values["restart_per_log2_gpus_min"].spin.value()) and growth > 0
    assert win.scenario().replace(name=before_sc.name) == before_sc.replace(restart_per_log2_gpus_min=growth)  # only it
    # At 16,384 GPUs the restart is the one entered (the anchor); every other size on the sweep moves.
    assert win.summary.goodput.value.text() + win.summary.goodput.detail.text() == before_text
    after_curve = win.plots.curve_data("goodputVsGpusPlot")[1]
    x = 10.0 ** win.plots.curve_data("goodputVsGpusPlot")[0]  # (a log axis: the data are log10 of the count)
    assert np.all(after_curve[x > 20_000] < before_curve[x > 20_000])
    assert np.all(after_curve[x < 12_000] > before_curve[x < 12_000])
    win.controls.values["restart_per_log2_gpus_min"].edited.emit(0.25)
    win.inputs.update(gpus=100_000)
    settle(qtbot, win)
    assert note.text() == "Restart in use: 5.7 min at 100,000 GPUs (5 min at 16,384 + 0.25 min per doubling)"
    assert win.scenario().restart_at_size_min == pytest.approx(5.0 + 0.25 * math.log2(100_000 / 16_384))
    win.inputs.update(gpus=65_536)
    assert note.text().startswith("Restart in use: 5.5 min at 65,536 GPUs")


def test_gpu_slider_and_marks(make_window, qtbot):
    win = make_window()
    win.findChild(object, "gpuMark100000").click()
    settle(qtbot, win)
    assert win.scenario().gpus == 100_000
    assert "30 minutes" in win.summary.every.value.text()
    x, _ = win.plots.int_marker.getData()
    assert x[0] == pytest.approx(5.0)
    slider = find(win, QAbstractSlider, "gpuCountSlider")
    slider.setValue(slider.minimum())
    settle(qtbot, win)
    assert win.scenario().gpus == 1024


@pytest.mark.parametrize(
    ("field", "typed", "expected"),
    [
        ("gpus", "1e5", 100_000),  # Qt's own box read this as 15
        ("gpus", "2.5e4", 25_000),
        ("days", "1e2", 100.0),  # ... and this as 12
        ("days", "123456", None),  # over the box's range: its top, not the digits that fit (1234)
        ("days", "", 54.0),  # nothing typed: the value stays
        ("days", "54,5", 54.0),  # not thousands, and no decimal point here: the value stays (it became 545)
        ("gpus", "12,34", 16_384),  # (it became 1,234)
        ("gpus", "20,000", 20_000),
        ("checkpoint_write_s", "1e-3", 0.0),  # what the box can show (it kept a hidden 0.001)
    ],
)
def test_a_typed_number_is_the_number_typed(make_window, qtbot, field, typed, expected):
    win = make_window()
    spin = win.controls.values[field].spin
    expected = spin.maximum() if expected is None else expected
    spin.setFocus()
    spin.selectAll()
    qtbot.keyClicks(spin, typed)
    qtbot.keyClick(spin, Qt.Key.Key_Return)
    settle(qtbot, win)
    sc = win.scenario()
    assert {"days": sc.hours / 24.0}.get(field, getattr(sc, field, None)) == pytest.approx(expected)


@pytest.mark.parametrize(
    "text", ["1e5", "100,000", "100_000", "1,000.5", "54,5", "1,5", "12,34", "2.5E-3", ".5", "-3", "1e", "abc", ""]
)
def test_number_boxes_and_flags_read_numbers_alike(qapp, text):
    """One grammar (core.fmt.read_number): a box takes what a flag takes, as the same number."""
    import argparse

    from planner_gui.cli.flags import number_arg
    from planner_gui.ui.widgets import DoubleSpinBox

    box = DoubleSpinBox()
    try:
        flag: float | None = number_arg(text)
    except argparse.ArgumentTypeError:
        flag = None
    assert box._number(text) == flag


def test_a_fixed_interval_far_from_the_best_is_never_called_the_best(make_window, qtbot):
    """At 1,024 GPUs 30 min instead of the best 22 min costs under 0.05 points: the card still names the best."""
    sc = load_preset("llama3-405b").replace(gpus=1024, checkpoint_interval_min=30.0, trials=200)
    win = make_window(sc, restore=False)
    settle(qtbot, win)
    m = win.last_result.main
    gain = 100 * (m.goodput_at_optimum() - m.expected.goodput)
    assert gain < 0.05 and m.optimal.exact < 25.0  # the case: a negligible gain, far from the best
    detail = win.summary.interval.detail.text()
    assert "at the best interval" not in detail
    assert f"best {fmt.duration_min(m.optimal.exact)}: +{gain:.1f} points available" in detail
    win.controls.use_optimal.setChecked(True)
    settle(qtbot, win)
    assert "at the best interval" in win.summary.interval.detail.text()


def test_a_mean_under_ten_interruptions_keeps_its_tenth(make_window, qtbot):
    sc = load_preset("llama3-405b").replace(gpus=16, trials=200)  # about 0.4 in the window
    win = make_window(sc, restore=False)
    settle(qtbot, win)
    mean = float(win.last_result.main.trials.unplanned.mean())
    assert 0.05 < mean < 9.95 and win.summary.interruptions.value.text() == f"{mean:.1f}"


def test_a_window_opening_on_a_long_run_shows_a_preview_first(make_window, qtbot):
    """A scenario whose full run takes long (remembered, or opened at start) is not a blank window meanwhile:
    the preview is shown first, then the full run follows; a quick one is the full run at once."""
    from planner_gui.core.analysis.sweep import run_cost
    from planner_gui.ui.main_window import START_PREVIEW_S

    long_run = load_preset("h100-100k-plan")
    assert run_cost(long_run).seconds > START_PREVIEW_S
    win = make_window(long_run, restore=False)
    assert win.last_result.request.quality.name == PREVIEW.name and win.compute.busy
    assert "preview" in win.status.text()
    quick = make_window(load_preset("llama3-405b"), restore=False)
    assert run_cost(quick.scenario()).seconds < START_PREVIEW_S
    assert quick.last_result.request.quality.name == FULL.name


def test_the_gpu_slider_lands_on_round_sizes(make_window):
    """Item 17: dragging can stop on 100,000 and 16,384; every position means a round count."""
    win = make_window(wait=False)
    slider = find(win, QAbstractSlider, "gpuCountSlider")
    seen = set()
    for pos in range(slider.minimum(), slider.maximum() + 1):
        slider.setValue(pos)
        seen.add(win.scenario().gpus)
    assert {1024, 16_384, 100_000, 1_048_576} <= seen
    assert all(n in _GPU_LANDMARKS or significant(n, 2) == n for n in seen)
    assert slider.width() > 250  # the slider has the panel's width, not a third of it


@pytest.mark.parametrize("preset", ["llama3-405b", "epoch-100k"])
def test_presets_load_under_their_titles_default_first(make_window, qtbot, preset):
    win = make_window()
    menu = next(a.menu() for a in win.menuBar().actions() if a.text() == "&Presets")
    titles = [a.text() for a in menu.actions()]
    assert titles[0] == load_preset("llama3-405b").name
    act = find(win, object, f"preset:{preset}")
    act.trigger()
    settle(qtbot, win)
    assert win.scenario() == load_preset(preset)
    assert act.text() == load_preset(preset).name


def _legend_meets_a_bar(win) -> bool:
    """Whether the histogram's legend, in the plot's data coordinates, overlaps a bar of trials."""
    plot = win.plots.plot("goodputHistogramPlot")
    legend = win.plots.legends["goodputHistogramPlot"]
    box = plot.vb.mapSceneToView(legend.sceneBoundingRect()).boundingRect()
    edges, counts = win.plots.hist.xData, win.plots.hist.yData
    return any(
        n > 0 and edges[i] < box.right() and edges[i + 1] > box.left() and box.top() < n for i, n in enumerate(counts)
    )


@pytest.mark.parametrize("gpus", [16_384, 10_000_000], ids=["92 %", "0 % at ten million GPUs"])
def test_the_histograms_legend_stays_clear_of_its_bars(make_window, qtbot, gpus):
    """At ten million GPUs every trial's goodput is 0 %: one bar at the left edge rose into the legend there."""
    win = make_window(load_preset("llama3-405b").replace(gpus=gpus), restore=False)
    settle(qtbot, win)
    qtbot.wait(50)
    assert not _legend_meets_a_bar(win)


def test_name_field_and_edited_preset(make_window, qtbot):
    win = make_window()
    name = find(win, object, "scenarioName")
    win.controls.values["gpus"].spin.setValue(100_000)
    assert name.text() == "100,000 GPUs, 54 days (edited from Llama 3 405B)"
    assert "100,000 GPUs, 54 days (edited from Llama 3 405B)" in win.windowTitle()
    name.setText("Our 100k plan")
    name.editingFinished.emit()
    assert win.scenario().name == "Our 100k plan" and "Our 100k plan" in win.windowTitle()


def test_a_name_with_a_right_to_left_override_shows_its_escape_and_is_kept_until_edited(make_window, qtbot):
    """A file named "Plan \u202e54 days" showed the rest of the name backwards in the field (the title bar showed
    the escape). The field shows the escape too; leaving the field unedited keeps the name as it is."""
    win = make_window(load_preset("llama3-405b").replace(name="Plan \u202e" + "x" * 190), restore=False)
    name = find(win, object, "scenarioName")
    assert name.text() == "Plan \\u202e" + "x" * 190 and name.text().isprintable()
    name.editingFinished.emit()
    assert win.scenario().name == "Plan \u202e" + "x" * 190 and not win.dirty
    name.setText("Plan B")
    name.editingFinished.emit()
    assert win.scenario().name == "Plan B"


def test_save_then_open_round_trips_and_keeps_the_mode(make_window, qtbot, tmp_path, monkeypatch):
    win = make_window()
    win.controls.values["restart_min"].spin.setValue(12.5)
    win.controls.use_optimal.setChecked(False)
    win.controls.interval.spin.setValue(42.0)
    win.summary.price.setValue(3.25)
    win.controls.cat_mult["GPU"].spin.setValue(2.0)
    target = tmp_path / "mine.json"
    target.write_text("{}")
    os.chmod(target, 0o644)
    monkeypatch.setattr("PySide6.QtWidgets.QFileDialog.getSaveFileName", lambda *a, **k: (str(target), ""))
    assert win.save()
    assert not win.dirty and "mine.json" in win.windowTitle()
    assert stat.S_IMODE(target.stat().st_mode) == 0o644
    saved = load(target)
    assert (saved.restart_min, saved.checkpoint_interval_min, saved.gpu_hour_cost_usd) == (12.5, 42.0, 3.25)
    other = make_window(load_preset("h100-1m"), restore=False)
    assert other.open_file(target, confirm=False)
    assert other.scenario() == saved
    assert str(target.resolve()) in other._recent()
    # Item 12: the GPU rates still read x2 against Llama 3's, not x1 against the file's.
    assert other.controls.cat_mult["GPU"].value() == pytest.approx(2.0)
    assert other.controls.cat_mult["Host"].value() == pytest.approx(1.0)


def test_bad_file_shows_dialog_and_keeps_scenario(make_window, tmp_path, monkeypatch):
    win = make_window()
    before = win.scenario()
    shown = []
    monkeypatch.setattr(QMessageBox, "critical", lambda parent, title, text, *a: shown.append((title, text)))
    bad = tmp_path / "bad.json"
    doc = json.loads(Path(ROOT / "planner_gui/core/data/presets/llama3-405b.json").read_text())
    doc["gpus"] = -5
    bad.write_text(json.dumps(doc))
    assert not win.open_file(bad, confirm=False)
    assert len(shown) == 1 and "gpus: must be a whole number" in shown[0][1]
    (tmp_path / "junk.json").write_bytes(b"\x00\xff")
    assert not win.open_file(tmp_path / "junk.json", confirm=False)
    assert len(shown) == 2 and "UTF-8" in shown[1][1]
    (tmp_path / "huge.json").write_text(json.dumps(doc).replace('"gpus": -5', '"gpus": ' + "9" * 5000))
    assert not win.open_file(tmp_path / "huge.json", confirm=False)
    assert len(shown) == 3 and "\n" not in shown[2][1]
    assert win.scenario() == before


def test_a_bad_remembered_session_is_dropped_and_the_app_starts(make_window, isolated_settings):
    """Issue 9 item 1: a remembered scenario that cannot be read must not stop the next start."""
    doc = json.loads(dumps(load_preset("llama3-405b")))
    text = json.dumps(doc).replace(f'"gpus": {doc["gpus"]}', '"gpus": ' + "1" * 5000)
    QSettings().setValue("session/scenario", text)
    win = make_window()
    assert win.scenario() == load_preset("llama3-405b")
    assert QSettings().value("session/scenario") is None


def test_rapid_moves_end_with_only_the_last_result(make_window, qtbot):
    win = make_window()
    shown = []
    win.resultsShown.connect(lambda: shown.append(win.last_result))
    slider = find(win, QAbstractSlider, "restartSlider")
    slider.setSliderDown(True)
    for v in range(300, 700, 10):
        slider.setValue(v)
        qtbot.wait(2)
    slider.setSliderDown(False)
    slider.sliderReleased.emit()
    settle(qtbot, win)
    final = win.scenario()
    last = shown[-1]
    assert last.main.scenario.restart_min == final.restart_min
    assert last.request.quality == FULL and last.main.scenario.trials == final.trials
    assert len(shown) < 40  # previews are throttled to one at a time, not one per move
    gens = [r.request.generation for r in shown]
    assert gens == sorted(gens)  # never an older result after a newer one
    assert any(r.request.quality == PREVIEW for r in shown[:-1]) or len(shown) == 1


def test_close_with_a_computation_running_exits_cleanly(make_window, qtbot, monkeypatch):
    win = make_window()
    win.inputs.update(gpus=1_000_000, days=365.0)
    qtbot.waitUntil(lambda: win.compute.busy, timeout=5_000)
    monkeypatch.setattr(QMessageBox, "question", lambda *a, **k: QMessageBox.StandardButton.Discard)
    assert win.close()
    assert not win.compute.alive


def test_cancel_marks_the_plots_out_of_date(make_window, qtbot, monkeypatch):
    """Item 7: after a cancel the plots say which run they show."""
    win = make_window()
    # A preview fits a time budget at any size, so it would be shown before the cancel; without the
    # budget it takes seconds here (8,000,000 GPUs x 365 days: 1,000,000 GPUs finished before the click once
    # the engine got faster), and the cancel stops it while the plots show other inputs.
    monkeypatch.setattr("planner_gui.ui.main_window.PREVIEW", dataclasses.replace(PREVIEW, budget_s=None))
    win.pin_baseline()
    win.inputs.update(gpus=8_000_000, days=365.0)
    qtbot.waitUntil(lambda: win.cancel_button.isVisible(), timeout=10_000)
    win.cancel_button.click()
    assert not win.compute.busy and win.status.text().startswith("Cancelled: these results show ")
    assert win.banner.isVisible()
    text = win.stale_label.text()
    assert "Out of date" in text and "cancelled" in text
    # One statement of the run shown: the status bar, the banner and the comparison table's column say it alike.
    statement = win.status.text().removeprefix("Cancelled: ").removesuffix(".")
    assert f"Out of date: {statement}." in text
    table = win.planning.table
    head = table.horizontalHeaderItem(table.columnCount() - 1)
    assert head.text().startswith("shown (") and statement.removeprefix("these results show ") in head.toolTip()
    assert f"{win.last_result.main.scenario.gpus:,} GPUs" in text
    assert "GPUs 16,384 -> 8,000,000; days 54 -> 365" in text  # which inputs the plots are not for
    assert win.restart_button.isVisible() and win.restart_button.text() == "Run again"


def test_a_refused_run_marks_the_plots_out_of_date(make_window, qtbot):
    win = make_window()
    win.inputs.update(trials=100_000, gpus=10_000_000, days=3650.0)
    assert win.banner.isVisible()
    assert "cannot be computed" in win.stale_label.text() and "16,384 GPUs" in win.stale_label.text()
    win.inputs.update(trials=500, gpus=16_384, days=54.0)
    settle(qtbot, win)
    assert not win.banner.isVisible()


def test_a_time_to_train_too_long_to_simulate_is_refused_before_it_is_sent(make_window, qtbot):
    """A training run at 10,000,000 GPUs (goodput near 0) has ~1e14 interruptions to simulate: it was sent, failed
    in the compute process with a traceback in the log, and offered "Run again", which could only fail again."""
    from planner_gui.core.model.scenario import Training

    win = make_window(load_preset("h100-100k").replace(trials=200, training=Training()), restore=False)
    settle(qtbot, win)
    win.inputs.update(gpus=10_000_000)
    assert win.banner.isVisible() and not win.compute.busy
    text = win.stale_label.text()
    assert "cannot be computed" in text and "Training run: about" in text and "ScenarioError" not in text
    assert not win.restart_button.isVisible()
    win.inputs.update(gpus=100_000)
    qtbot.waitUntil(lambda: not win.banner.isVisible(), timeout=60_000)  # computed again


def test_unsaved_changes_prompt_on_close(make_window, monkeypatch):
    win = make_window()
    win.controls.values["detect_min"].spin.setValue(7.0)
    answers = [QMessageBox.StandardButton.Cancel, QMessageBox.StandardButton.Discard]
    asked = []

    def question(*a, **k):
        asked.append(a)
        return answers[len(asked) - 1]

    monkeypatch.setattr(QMessageBox, "question", question)
    assert not win.close() and win.isVisible()
    assert win.close() and len(asked) == 2


def test_discard_discards_and_save_remembers(make_window, monkeypatch, tmp_path):
    """Item 9: quitting with Discard does not bring the discarded edits back at the next start."""
    win = make_window()
    win.inputs.update(gpus=50_000)
    monkeypatch.setattr(QMessageBox, "question", lambda *a, **k: QMessageBox.StandardButton.Discard)
    assert win.close()
    again = make_window()
    assert again.scenario() == load_preset("llama3-405b")
    again.inputs.update(gpus=60_000)
    target = tmp_path / "sixty.json"
    monkeypatch.setattr("PySide6.QtWidgets.QFileDialog.getSaveFileName", lambda *a, **k: (str(target), ""))
    monkeypatch.setattr(QMessageBox, "question", lambda *a, **k: QMessageBox.StandardButton.Save)
    assert again.close()
    third = make_window()
    assert third.scenario().gpus == 60_000 and "sixty.json" in third.windowTitle()


def test_copy_results_as_json_matches_the_command_line(make_window, qtbot, tmp_path, capsys):
    """Contract: Edit > Copy Results as JSON gives what `planner-gui run --json` prints for the inputs."""
    from planner_gui.cli import main

    win = make_window()
    win.inputs.update(gpus=32_768, detect_min=3.0, trials=300)
    win.summary.price.setValue(4.0)
    act = find(win, object, "copyResultsJsonAction")
    act.trigger()  # before the full run is shown: it is copied as soon as it is
    settle(qtbot, win)
    qtbot.waitUntil(lambda: QApplication.clipboard().text().startswith("{"), timeout=10_000)
    copied = json.loads(QApplication.clipboard().text())
    path = tmp_path / "s.json"
    save(win.scenario(), path)
    capsys.readouterr()
    assert main(["run", "--scenario", str(path), "--json"]) == 0
    assert copied == json.loads(capsys.readouterr().out)


def test_plot_items_can_be_added_and_removed_repeatedly(qapp):
    """Guards the PySide6 6.12.0 crash (itemChange refcount) that the pin <6.12 avoids."""
    w = pg.PlotWidget()
    for _ in range(200):
        item = pg.PlotDataItem(np.arange(10), np.arange(10))
        w.addItem(item)
        w.removeItem(item)
    w.clear()
    assert w.getPlotItem().listDataItems() == []
    w.deleteLater()


def test_no_display_says_so_in_one_line(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}
    out = subprocess.run(
        [sys.executable, "-m", "planner_gui"], capture_output=True, text=True, env=env, cwd=ROOT, timeout=120
    )
    assert out.returncode == 2
    assert out.stderr.strip().splitlines() == [
        "planner-gui: no display available; use 'planner-gui run --preset llama3-405b' for the command line"
    ]


def test_app_starts_and_logs_where_the_readme_says(tmp_path):
    """Item 11: the log is in <data folder>/planner-gui/logs/planner-gui.log."""
    env = dict(
        os.environ,
        QT_QPA_PLATFORM="offscreen",
        PLANNER_GUI_QUIT_AFTER_START="1",
        XDG_CONFIG_HOME=str(tmp_path / "config"),
        XDG_DATA_HOME=str(tmp_path / "data"),
        HOME=str(tmp_path),
    )
    out = subprocess.run(
        [sys.executable, "-m", "planner_gui"], capture_output=True, text=True, env=env, cwd=ROOT, timeout=180
    )
    assert out.returncode == 0, out.stderr
    assert "init finished" in out.stderr and "Traceback" not in out.stderr
    log = tmp_path / "data" / "planner-gui" / "logs" / "planner-gui.log"
    assert "init finished" in log.read_text()


@pytest.mark.parametrize("content", [None, "{bad"], ids=["missing", "not JSON"])
def test_an_unattended_start_with_a_scenario_file_that_cannot_be_opened_ends_in_one_line(tmp_path, content):
    """`planner-gui --scenario FILE` with a bad FILE waited on its error dialog for ever when nobody was there to
    answer it (the smoke test's quit-after-start): now one line and exit status 2, and no process left."""
    path = tmp_path / "plan.json"
    if content is not None:
        path.write_text(content)
    env = dict(
        os.environ, QT_QPA_PLATFORM="offscreen", PLANNER_GUI_QUIT_AFTER_START="1", XDG_CONFIG_HOME=str(tmp_path),
        XDG_DATA_HOME=str(tmp_path), HOME=str(tmp_path),
    )  # fmt: skip
    out = subprocess.run(
        [sys.executable, "-m", "planner_gui", "--scenario", str(path)],
        capture_output=True, text=True, env=env, cwd=ROOT, timeout=120,
    )  # fmt: skip
    assert out.returncode == 2, out.stderr
    lines = [x for x in out.stderr.splitlines() if x.startswith("planner-gui: error: ")]
    assert len(lines) == 1 and ("cannot read" in lines[0] or "not valid JSON" in lines[0]), out.stderr


def test_a_killed_compute_process_is_restarted(make_window, qtbot):
    win = make_window()
    first = win.compute._process
    first.kill()
    qtbot.waitUntil(lambda: win.compute._process is not first, timeout=20_000)
    win.controls.values["restart_min"].spin.setValue(8.0)
    settle(qtbot, win)
    assert win.last_result.main.scenario.restart_min == 8.0
    assert first.poll() is not None and win.compute._process.poll() is None


def test_a_request_survives_the_compute_process_dying_mid_run(make_window, qtbot):
    win = make_window()
    win.inputs.update(gpus=400_000)
    assert win.compute.busy
    first = win.compute._process
    first.kill()
    settle(qtbot, win)
    assert win.last_result.main.scenario.gpus == 400_000 and win.compute._process is not first


def test_edit_undo_and_redo_take_back_every_input_change(make_window, qtbot, monkeypatch):
    win = make_window()
    monkeypatch.setattr(QMessageBox, "question", lambda *a, **k: QMessageBox.StandardButton.Discard)
    undo, redo = find(win, object, "undoAction"), find(win, object, "redoAction")
    edit = next(a.menu() for a in win.menuBar().actions() if a.text() == "&Edit")
    assert undo in edit.actions() and redo in edit.actions()
    assert undo.shortcut().toString() == "Ctrl+Z"
    assert "Ctrl+Shift+Z" in [k.toString() for k in redo.shortcuts()]
    assert not undo.isEnabled() and not redo.isEnabled()
    first = win.scenario()
    win.controls.values["detect_min"].spin.setValue(9.0)
    win.inputs.close_step()
    assert undo.isEnabled() and "detection 5 -> 9 min" in undo.text()
    find(win, object, "preset:h100-1m").trigger()
    assert win.scenario() == load_preset("h100-1m") and "preset" in undo.text()
    undo.trigger()  # the preset taken back: the edited scenario again, in the window's controls too
    assert win.scenario().detect_min == 9.0 and win.controls.values["detect_min"].spin.value() == 9.0
    assert win.dirty and "(edited from Llama 3 405B)" in win.windowTitle() and "Undid preset" in win.status.text()
    undo.trigger()
    assert win.scenario() == first and win.controls.values["detect_min"].spin.value() == first.detect_min
    assert not win.dirty and not undo.isEnabled() and redo.isEnabled()
    redo.trigger()
    assert win.scenario().detect_min == 9.0
    settle(qtbot, win)  # the results follow the inputs undone and redone
    assert win.last_result is not None and win.last_result.request.scenario.detect_min == 9.0


def test_ctrl_z_in_a_box_just_entered_takes_the_edit_back(make_window, qtbot):
    """Typing a value, Enter, then Ctrl+Z with the box still focused did nothing (the box kept the key for its own
    text), while Edit > Undo offered the change; while an entry is still being typed, Ctrl+Z edits its text."""
    from PySide6.QtGui import QKeyEvent

    win = make_window()
    win.show()
    win.activateWindow()
    spin = win.controls.values["restart_min"].spin
    spin.setFocus()
    qtbot.waitUntil(spin.hasFocus, timeout=3_000)
    spin.lineEdit().selectAll()
    qtbot.keyClicks(spin, "7")
    qtbot.keyClick(spin, Qt.Key.Key_Return)
    assert win.scenario().restart_min == 7.0
    win.inputs.close_step()

    def shortcut_override(key: Qt.Key, mods: Qt.KeyboardModifier) -> bool:
        """Whether the box keeps the key for itself (accepts the override), as Qt asks before a shortcut."""
        ev = QKeyEvent(QKeyEvent.Type.ShortcutOverride, key, mods)
        ev.ignore()
        QApplication.sendEvent(spin, ev)
        return ev.isAccepted()

    ctrl = Qt.KeyboardModifier.ControlModifier
    assert not shortcut_override(Qt.Key.Key_Z, ctrl)  # committed: the window's Undo takes it
    find(win, object, "undoAction").trigger()  # (what the shortcut runs)
    assert win.scenario().restart_min == 5.0 and spin.value() == 5.0
    spin.lineEdit().selectAll()
    qtbot.keyClicks(spin, "8")  # typed, not entered: the key edits the text
    assert shortcut_override(Qt.Key.Key_Z, ctrl)


def test_a_remembered_size_is_restored_only_where_it_fits(make_window, monkeypatch):
    """A window closed at 1900 x 1050 on a large screen reopened squeezed to 1024 x 680 on a 1440 x 900 one:
    a remembered size that does not fit the screen gives way to the default for that screen."""
    from PySide6.QtCore import QRect, QSize

    from planner_gui.ui.main_window import MainWindow, size_fits

    assert size_fits(QSize(1300, 800), QRect(0, 0, 1440, 900))
    assert not size_fits(QSize(1900, 1050), QRect(0, 0, 1440, 900))
    assert not size_fits(QSize(800, 600), QRect(0, 0, 1440, 900))  # smaller than the window can be
    room = QRect(0, 0, 1440, 900)
    monkeypatch.setattr(MainWindow, "_room", lambda self: room)
    first = make_window()
    first.resize(1300, 800)
    assert first.close()
    again = make_window()
    assert (again.width(), again.height()) == (1300, 800)  # it fits: restored
    again.resize(1900, 1050)  # as on a larger screen
    assert again.close()
    third = make_window()
    assert (third.width(), third.height()) != (1900, 1050)
    assert third.width() <= room.width() and third.height() <= room.height()


def test_a_refusal_in_the_window_names_the_inputs_as_the_window_labels_them(make_window):
    """It showed the file's field paths ("spares.recovery_mode: ...", "trials: ...")."""
    from planner_gui.core.model.spares import Spares

    win = make_window()
    win.inputs.update(spares=Spares(recovery_mode="continue", replica_gpus=16_384))  # one replica: cannot continue
    assert win.banner.isVisible()
    assert "Spares and repairs: continue needs two replicas or more" in win.stale_label.text()
    assert "spares." not in win.stale_label.text() and "spares." not in win.status.text()
    win.inputs.update(spares=None, gpus=10_000_000, days=3650.0, trials=100_000)
    assert "Trials: about" in win.status.text() and "at most" in win.status.text()


def test_a_main_run_is_drawn_from_its_part_and_the_result_draws_only_the_rest(make_window, qtbot):
    """The plots a main run alone decides (headline numbers, components, histogram, time breakdown) are drawn from a
    full run's part while its sweeps are computed, where the other plots show the same inputs (their preview); its
    whole result then draws only the sweeps' plots (and the tabs), and only then counts as shown. A part of other
    inputs than the plots show is not drawn (it would show two scenarios at once)."""
    from planner_gui.core.session.plan import MainPart, PlanRequest, compute_plan

    win = make_window(load_preset("llama3-405b").replace(trials=400))  # (a preview takes 200 of them)
    calls: list[str] = []  # the plots the render steps draw (a resize may redraw one besides: not counted)
    saved = win.plots._render
    win.plots._render = lambda res, show, names, main=False: (calls.extend(names), saved(res, show, names, main))[1]
    shown: list = []
    win.resultsShown.connect(lambda: shown.append(win.last_result))
    main_plots = ["componentsPlot", "goodputHistogramPlot", "timeBreakdownPlot"]
    sweep_plots = ["goodputVsGpusPlot", "goodputVsIntervalPlot", "interruptionsVsGpusPlot"]
    gen = win.compute.generation + 100  # (newer than anything the window has asked for)
    sc = win.inputs.scenario.replace(detect_min=win.inputs.scenario.detect_min + 7.0)
    preview = compute_plan(PlanRequest(sc, PREVIEW, gen))
    win._show(preview)
    qtbot.waitUntil(lambda: shown == [preview], timeout=5_000)

    calls.clear()
    parts: list[MainPart] = []
    res = compute_plan(PlanRequest(sc, FULL, gen + 1), on_main=parts.append)
    assert len(parts) == 1 and parts[0].main is res.main
    win._show_part(parts[0])
    qtbot.waitUntil(lambda: not win._rendering, timeout=5_000)
    assert sorted(calls) == main_plots
    assert shown == [preview] and win.last_result is preview  # not shown until its sweeps are
    _, counts = win.plots.curve_data("goodputHistogramPlot")
    assert int(np.sum(counts)) == len(res.main.goodput) != len(preview.main.goodput)  # the full run's trials
    assert win.summary.goodput.value.text() == fmt.percent(float(np.mean(res.main.goodput)))
    assert win.plots.main_shown is parts[0] and win.plots.result is preview

    calls.clear()
    win._show(res)
    qtbot.waitUntil(lambda: len(shown) == 2, timeout=5_000)
    assert sorted(calls) == sweep_plots  # the main run's plots stand
    assert shown[-1] is res and win.plots.result is res

    # A part of other inputs than the plots show is not drawn; their whole result draws every plot
    calls.clear()
    other = sc.replace(detect_min=sc.detect_min + 1.0)
    others: list[MainPart] = []
    newer = compute_plan(PlanRequest(other, FULL, gen + 2), on_main=others.append)
    win._show_part(others[0])
    qtbot.wait(50)
    assert calls == [] and win.plots.main_shown is not others[0]
    win._show(newer)
    qtbot.waitUntil(lambda: len(shown) == 3, timeout=5_000)
    assert sorted(calls) == sorted(main_plots + sweep_plots) and win.plots.main_shown is newer

    # A part that comes while its preview is drawn takes over the main run's plots, not the sweeps' plots
    calls.clear()
    last = other.replace(detect_min=other.detect_min + 1.0)
    quick = compute_plan(PlanRequest(last, PREVIEW, gen + 3))
    later: list[MainPart] = []
    compute_plan(PlanRequest(last, FULL, gen + 4), on_main=later.append)
    win._show(quick)
    win._show_part(later[0])
    qtbot.waitUntil(lambda: len(shown) == 4, timeout=5_000)
    assert sorted(calls) == sorted(main_plots + sweep_plots) and shown[-1] is quick
    assert win.plots.main_shown is later[0] and win.plots.result is quick


def test_a_released_slider_asks_for_a_preview_first_unless_the_plots_or_the_pending_request_have_it(
    make_window, monkeypatch
):
    """On a large scenario previews lag the slider: released, the plots could show an earlier preview's inputs (or
    those of before the drag) until the full run came, a minute or more later."""
    from planner_gui.core.files.scenario_io import validate
    from planner_gui.core.session.plan import PlanRequest
    from planner_gui.ui.compute import ComputeController

    win = make_window(load_preset("llama3-405b").replace(trials=400))
    asked: list[bool] = []
    monkeypatch.setattr(win, "recompute", lambda preview=False: asked.append(preview))
    pending: list = [None]
    monkeypatch.setattr(ComputeController, "pending", property(lambda self: pending[0]))

    win._drag_finished()  # the plots show the inputs: the full run at once
    assert asked == [False] and not win._full_wanted

    win.inputs.update(detect_min=win.inputs.scenario.detect_min + 3.0)
    asked.clear()
    win._drag_finished()  # the plots show other inputs, and nothing computes these: a preview, then the full run
    assert asked == [True] and win._full_wanted

    asked.clear()
    pending[0] = PlanRequest(validate(win.inputs.scenario), PREVIEW, 10**6)
    win._drag_finished()  # their preview is being computed: the full run follows it
    assert asked == [] and win._full_wanted


def test_the_status_bar_says_what_the_plots_show_while_a_full_run_is_computed(make_window, monkeypatch):
    from planner_gui.core.files.scenario_io import validate
    from planner_gui.core.session.plan import PlanRequest, compute_plan
    from planner_gui.ui.compute import ComputeController

    win = make_window(load_preset("llama3-405b").replace(trials=400))
    sc = validate(win.inputs.scenario)
    win.last_result = compute_plan(PlanRequest(sc, PREVIEW, 10**6))
    pending = PlanRequest(sc, FULL, 10**6 + 1)
    monkeypatch.setattr(ComputeController, "pending", property(lambda self: pending))
    assert win._computing_text() == "Computing the full run; the plots show a preview (approximate)"
    win._drawn["components"] = pending.generation  # (its part is drawn)
    assert win._computing_text().startswith("Computing the sweeps of the full run; the headline numbers")
    assert win._computing_text().endswith("the other plots a preview")
    pending = PlanRequest(sc.replace(detect_min=sc.detect_min + 1.0), FULL, 10**6 + 2)  # other inputs
    assert win._computing_text() == "Computing..."


def test_the_presets_menu_names_each_preset_by_its_whole_title(make_window):
    from planner_gui.core.files.presets import preset_titles

    win = make_window(load_preset("llama3-405b").replace(trials=200))
    for slug, title in preset_titles().items():
        assert find(win, object, f"preset:{slug}").text() == title
