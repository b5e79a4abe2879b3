"""File > Open Study Results: the heatmap shows the chosen inputs and output, the bars the Sobol indices, and
every legend entry is drawn."""

from __future__ import annotations

import textwrap
from pathlib import Path

import numpy as np
import pytest

from planner_gui.core.study import Backend, ResultStore, design_size, read_results, read_spec, run_study, study_meta
from planner_gui.core.study.sobol import sobol_indices
from planner_gui.core.study.summary import heatmap

pytestmark = pytest.mark.gui

GRID = """
[study]
trials = 20
[vary]
detect_min = [1, 10, 30]
gpus = [8192, 16384]
checkpoint_interval_min = ["optimal", 30]
"""
SOBOL = """
[study]
design = "sobol"
samples = 16
trials = 20
[vary]
detect_min = { min = 1, max = 30 }
checkpoint_write_s = { min = 1, max = 300, scale = "log" }
gpu_hour_cost_usd = { min = 1, max = 3 }
"""


def make_results(tmp_path: Path, text: str, name: str) -> Path:
    spec_path = tmp_path / f"{name}.toml"
    spec_path.write_text(textwrap.dedent(text))
    spec = read_spec(spec_path)
    out = tmp_path / f"{name}.parquet"
    store = ResultStore(out, study_meta(spec, design_size(spec)), fresh=True)
    run_study(spec, store, Backend(workers=1))
    store.close()
    return out


def open_view(qtbot, path: Path):
    from planner_gui.ui.study_view import StudyView

    view = StudyView()
    qtbot.addWidget(view)
    view.load(path)
    qtbot.waitUntil(lambda: not view.loading and view.results is not None, timeout=20_000)
    view.show()
    return view


def axis_label(plot, side: str) -> str:
    return plot.getPlotItem().getAxis(side).labelText


def test_heatmap_shows_the_chosen_inputs_and_output(qtbot, tmp_path):
    path = make_results(tmp_path, GRID, "grid")
    view = open_view(qtbot, path)
    res = read_results(path)
    assert [view.x_box.itemText(i) for i in range(view.x_box.count())] == res.inputs
    for x, y, out in (
        ("detect_min", "gpus", "goodput.mean"),
        ("checkpoint_interval_min", "detect_min", "goodput_expected"),
        ("gpus", "checkpoint_interval_min", "lost_cost_usd"),
    ):
        view.choose(x, y, out)
        want = heatmap(res, x, y, out)
        np.testing.assert_array_equal(view.image.image, want.values)
        assert view.image.image.shape == (len(want.y_labels), len(want.x_labels))
        assert axis_label(view.heat_plot, "bottom") == x and axis_label(view.heat_plot, "left") == y
        assert view.colorbar.axis.labelText == out
        lo, hi = view.colorbar.levels()
        assert lo == pytest.approx(np.nanmin(want.values)) and hi == pytest.approx(np.nanmax(want.values))
        ticks = view.heat_plot.getPlotItem().getAxis("bottom")._tickLevels[0]
        assert [t for _, t in ticks] == want.x_labels
    # each cell is the mean over the other inputs of the scenarios in it, by hand for one cell
    view.choose("detect_min", "gpus", "goodput.mean")
    d, g, gp = (np.asarray(res.columns[c], dtype=float) for c in ("detect_min", "gpus", "goodput.mean"))
    cell = gp[(d == 10) & (g == 16384)]
    assert cell.size == 2 and view.image.image[1, 1] == pytest.approx(cell.mean(), rel=1e-15)


def test_sobol_bars_are_the_indices_and_every_legend_entry_is_drawn(qtbot, tmp_path):
    from planner_gui.ui.study_view import LEGEND

    path = make_results(tmp_path, SOBOL, "sobol")
    view = open_view(qtbot, path)
    s = sobol_indices(read_results(path))
    assert view.bar_plot.isVisible()
    np.testing.assert_allclose(view.bars["first"].opts["height"], s.s1)
    np.testing.assert_allclose(view.bars["total"].opts["height"], s.st)
    np.testing.assert_allclose(view.whiskers["first"].opts["height"], 2 * s.s1_conf)
    np.testing.assert_allclose(view.whiskers["total"].opts["height"], 2 * s.st_conf)
    entries = {label.text: sample.item for sample, label in view.legend.items}
    assert set(entries) == set(LEGEND.values())
    drawn = view.bar_plot.getPlotItem().items
    for item in entries.values():
        assert item in drawn and item.isVisible() and len(item.opts["height"]) == 3
    ticks = view.bar_plot.getPlotItem().getAxis("bottom")._tickLevels[0]
    assert [t for _, t in ticks] == ["detect_min", "checkpoint_write_s", "gpu_hour_cost_usd"]


def test_a_study_without_a_sobol_design_says_so_and_draws_no_bars(qtbot, tmp_path):
    view = open_view(qtbot, make_results(tmp_path, GRID, "grid"))
    assert not view.bar_plot.isVisible() and not view.legend.items
    assert "need a Sobol design" in view.sobol_note.text()


def test_a_bad_file_opens_a_dialog_not_a_traceback(qtbot, tmp_path, monkeypatch):
    from PySide6.QtWidgets import QMessageBox

    from planner_gui.ui.study_view import StudyView

    shown = []
    monkeypatch.setattr(QMessageBox, "critical", lambda *a, **k: shown.append(a[2]))
    bad = tmp_path / "bad.csv"
    bad.write_text("a,b\n1,2\n")
    view = StudyView()
    qtbot.addWidget(view)
    view.load(bad)
    qtbot.waitUntil(lambda: bool(shown), timeout=20_000)
    assert "not results of planner-gui study" in shown[0] and "\n" not in shown[0]


def test_file_menu_opens_study_results(make_window, qtbot, tmp_path):
    from planner_gui.ui.study_view import StudyView

    w = make_window()
    action = next(a for a in w.menuBar().actions()[0].menu().actions() if a.objectName() == "actionOpenStudy")
    assert action.text().replace("&", "") == "Open Study Results..."
    view = w.open_study_results(make_results(tmp_path, GRID, "grid"))
    assert isinstance(view, StudyView)
    qtbot.waitUntil(lambda: view.results is not None, timeout=20_000)
    assert view.heat is not None and view.isVisible()
    view.close()
