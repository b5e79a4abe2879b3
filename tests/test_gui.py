"""The desktop window, driven headless with pytest-qt."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pyqtgraph as pg
import pytest
from PySide6.QtWidgets import QAbstractSlider, QMessageBox

from planner_gui.core.scenario_io import load, load_preset, save
from planner_gui.ui import MainWindow
from planner_gui.ui.compute import FULL, PREVIEW

ROOT = Path(__file__).resolve().parent.parent
SLIDERS = ["gpuCountSlider", "daysSlider", "checkpointIntervalSlider", "checkpointWriteSlider", "detectSlider",
           "restartSlider"]
PLOTS = ["interruptionsVsGpusPlot", "goodputVsGpusPlot", "goodputVsIntervalPlot", "componentsPlot",
         "goodputHistogramPlot", "timeBreakdownPlot"]


def find(win: MainWindow, cls, name: str):
    w = win.findChild(cls, name)
    assert w is not None, name
    return w


def settle(qtbot, win: MainWindow) -> None:
    """Wait until the worker is idle and the newest inputs are shown."""
    qtbot.waitUntil(lambda: not win.compute.busy and win.last_result is not None
                    and win.last_result.request.generation == win.compute.generation
                    and win.last_result.request.quality == FULL, timeout=60_000)


def test_default_window_has_the_named_widgets(make_window):
    win = make_window()
    assert win.scenario() == load_preset("llama3-405b")
    for name in SLIDERS:
        assert isinstance(find(win, QAbstractSlider, name), QAbstractSlider)
    for name in PLOTS:
        assert isinstance(find(win, pg.PlotWidget, name), pg.PlotWidget)
    assert "419" in win.summary.interruptions.value.text()
    assert "3.1 hours" in win.summary.every.value.text()
    assert not win.dirty


@pytest.mark.parametrize("name", ["restartSlider", "checkpointWriteSlider", "detectSlider", "daysSlider"])
def test_slider_moves_change_plots_and_summary(make_window, qtbot, name):
    win = make_window()
    before_curve = win.plots.curve_data("goodputVsGpusPlot")[1].copy()
    before_hist = win.plots.curve_data("goodputHistogramPlot")[1].copy()
    before_text = win.summary.goodput.value.text() + win.summary.goodput.detail.text()
    slider = find(win, QAbstractSlider, name)
    with qtbot.waitSignal(win.resultsShown, timeout=60_000):
        slider.setValue(slider.value() + 200)
    settle(qtbot, win)
    assert not np.allclose(win.plots.curve_data("goodputVsGpusPlot")[1], before_curve)
    assert not np.array_equal(win.plots.curve_data("goodputHistogramPlot")[1], before_hist)
    assert win.summary.goodput.value.text() + win.summary.goodput.detail.text() != before_text
    assert win.dirty and win.windowTitle().startswith("untitled *")


def test_gpu_slider_and_marks(make_window, qtbot):
    win = make_window()
    with qtbot.waitSignal(win.resultsShown, timeout=60_000):
        win.findChild(object, "gpuMark100000").click()
    settle(qtbot, win)
    assert win.scenario().gpus == 100_000
    assert "30 minutes" in win.summary.every.value.text()
    x, _ = win.plots.int_marker.getData()
    assert x[0] == pytest.approx(5.0)
    slider = find(win, QAbstractSlider, "gpuCountSlider")
    with qtbot.waitSignal(win.resultsShown, timeout=60_000):
        slider.setValue(slider.minimum())
    settle(qtbot, win)
    assert win.scenario().gpus == 1024


def test_component_multiplier_changes_the_bars(make_window, qtbot):
    win = make_window()
    _, before = win.plots.curve_data("componentsPlot")
    row = win.controls.comp_rows[0]  # Faulty GPU
    with qtbot.waitSignal(win.resultsShown, timeout=60_000):
        row.control.spin.setValue(10.0)
    settle(qtbot, win)
    _, after = win.plots.curve_data("componentsPlot")
    assert after.max() > 5 * before.max()
    assert win.scenario().components[0].rate_per_gpu_hour == pytest.approx(
        10 * load_preset("llama3-405b").components[0].rate_per_gpu_hour)


def test_presets_load(make_window, qtbot):
    win = make_window()
    with qtbot.waitSignal(win.resultsShown, timeout=60_000):
        win.load_preset("h100-100k")
    settle(qtbot, win)
    assert win.scenario() == load_preset("h100-100k")
    assert "one every 30 minutes" == win.summary.every.value.text()


def test_save_then_open_round_trips(make_window, qtbot, tmp_path, monkeypatch):
    win = make_window()
    win.controls.restart.spin.setValue(12.5)
    win.controls.use_optimal.setChecked(False)
    win.controls.interval.spin.setValue(42.0)
    win.summary.price.setValue(3.25)
    target = tmp_path / "mine.json"
    monkeypatch.setattr("PySide6.QtWidgets.QFileDialog.getSaveFileName", lambda *a, **k: (str(target), ""))
    assert win.save()
    assert not win.dirty and "mine.json" in win.windowTitle()
    saved = load(target)
    assert (saved.restart_min, saved.checkpoint_interval_min, saved.gpu_hour_cost_usd) == (12.5, 42.0, 3.25)
    other = make_window(load_preset("h100-1m"), restore=False)
    with qtbot.waitSignal(other.resultsShown, timeout=60_000):
        assert other.open_file(target, confirm=False)
    assert other.scenario() == saved
    assert str(target.resolve()) in other._recent()


def test_exports_write_nonempty_files(make_window, tmp_path):
    win = make_window()
    png = win.export_plots_to(tmp_path / "plots.png")
    svg = win.export_plots_to(tmp_path / "plots.svg")
    assert len(png) == 6 and len(svg) == 6
    for f in png + svg:
        assert f.stat().st_size > 1000, f
    assert png[0].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert b"<svg" in svg[0].read_bytes()[:2000]
    csvs = win.export_results_to(tmp_path / "results.csv")
    assert len(csvs) == 3
    lines = csvs[0].read_text().splitlines()
    assert len(lines) == 1 + win.scenario().trials and lines[0].startswith("trial,")
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temporary files left


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
    assert win.scenario() == before


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
    win.controls.gpus.spin.setValue(1_000_000)
    win.controls.days.spin.setValue(365)
    qtbot.waitUntil(lambda: win.compute.busy, timeout=5_000)
    monkeypatch.setattr(QMessageBox, "question", lambda *a, **k: QMessageBox.StandardButton.Discard)
    assert win.close()
    assert not win.compute.alive


def test_cancel_stops_a_long_run(make_window, qtbot):
    win = make_window()
    win.controls.gpus.spin.setValue(1_000_000)
    win.controls.days.spin.setValue(365)
    qtbot.waitUntil(lambda: win.cancel_button.isVisible(), timeout=10_000)
    win.cancel_button.click()
    assert not win.compute.busy and "Cancelled" in win.status.text()


def test_unsaved_changes_prompt_on_close(make_window, monkeypatch):
    win = make_window()
    win.controls.detect.spin.setValue(7.0)
    answers = [QMessageBox.StandardButton.Cancel, QMessageBox.StandardButton.Discard]
    asked = []

    def question(*a, **k):
        asked.append(a)
        return answers[len(asked) - 1]

    monkeypatch.setattr(QMessageBox, "question", question)
    assert not win.close() and win.isVisible()
    assert win.close() and len(asked) == 2


def test_baseline_overlay(make_window, qtbot):
    win = make_window()
    win.pin_baseline()
    assert win.plots.gp_band.base.isVisible() and win.plots.comp_base.isVisible()
    base_x, base_y = win.plots.gp_band.base.getData()
    with qtbot.waitSignal(win.resultsShown, timeout=60_000):
        win.controls.restart.spin.setValue(30.0)
    settle(qtbot, win)
    np.testing.assert_array_equal(win.plots.gp_band.base.getData()[1], base_y)
    assert not np.allclose(win.plots.gp_band.mean.getData()[1], base_y)
    win.clear_baseline()
    assert not win.plots.gp_band.base.isVisible()


def test_settings_remember_the_scenario(make_window, qtbot):
    win = make_window()
    win.controls.gpus.spin.setValue(50_000)
    win._confirm_discard = lambda: True
    win.close()
    again = make_window()
    assert again.scenario().gpus == 50_000


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
    out = subprocess.run([sys.executable, "-m", "planner_gui"], capture_output=True, text=True, env=env, cwd=ROOT,
                         timeout=120)
    assert out.returncode == 2
    assert out.stderr.strip().splitlines() == [
        "planner-gui: no display available; use 'planner-gui run --preset llama3-405b' for the command line"]


def test_app_starts_and_quits_by_itself(tmp_path):
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", PLANNER_GUI_QUIT_AFTER_START="1",
               XDG_CONFIG_HOME=str(tmp_path / "config"), XDG_DATA_HOME=str(tmp_path / "data"), HOME=str(tmp_path))
    out = subprocess.run([sys.executable, "-m", "planner_gui"], capture_output=True, text=True, env=env, cwd=ROOT,
                         timeout=180)
    assert out.returncode == 0, out.stderr
    assert "init finished" in out.stderr and "Traceback" not in out.stderr
    logs = list((tmp_path / "data").rglob("planner-gui.log"))
    assert logs and "init finished" in logs[0].read_text()


def test_a_killed_compute_process_is_restarted(make_window, qtbot):
    win = make_window()
    first = win.compute._process
    first.kill()
    qtbot.waitUntil(lambda: win.compute._process is not first, timeout=20_000)
    with qtbot.waitSignal(win.resultsShown, timeout=60_000):
        win.controls.restart.spin.setValue(8.0)
    settle(qtbot, win)
    assert win.last_result.main.scenario.restart_min == 8.0
    assert first.poll() is not None and win.compute._process.poll() is None


def test_a_request_survives_the_compute_process_dying_mid_run(make_window, qtbot):
    win = make_window()
    win.controls.gpus.spin.setValue(400_000)
    assert win.compute.busy
    first = win.compute._process
    first.kill()
    settle(qtbot, win)
    assert win.last_result.main.scenario.gpus == 400_000 and win.compute._process is not first
