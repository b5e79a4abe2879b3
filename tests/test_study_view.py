"""File > Open Study Results: the heatmap shows the chosen inputs and output, the bars the Sobol indices, and
every legend entry is drawn."""

from __future__ import annotations

import textwrap
from pathlib import Path

import numpy as np
import pytest

from planner_gui.core.study import Backend, ResultStore, design_size, read_results, read_spec, run_study, study_meta
from planner_gui.core.study.sobol import sobol_indices

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
    from planner_gui.ui.study_view import study_heatmap

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
        want = study_heatmap(res, x, y, out)
        np.testing.assert_array_equal(view.image.image, want.values)
        assert view.image.image.shape == (len(want.y_labels), len(want.x_labels))
        assert axis_label(view.heat_plot, "bottom") == x and axis_label(view.heat_plot, "left") == y
        assert view.colorbar.axis.labelText == out
        lo, hi = view.colorbar.levels()
        assert lo == pytest.approx(np.nanmin(want.values)) and hi == pytest.approx(np.nanmax(want.values))
        ticks = view.heat_plot.getPlotItem().getAxis("bottom")._tickLevels[0]
        assert [t for _, t in ticks] == want.x_labels
    assert want.x_labels == ["8,192", "16.4k"]  # whole numbers as such, not 8.19e+03
    assert view.cell_note.text() == "3 scenarios per cell"  # not "3 to 3"
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
    order = [s.inputs.index(n) for n in view.sobol_order]
    assert sorted(order) == [0, 1, 2] and list(s.st[order]) == sorted(s.st, reverse=True)  # largest total on top
    # horizontal bars: from 0 to the index, one row per input, first-order above total
    for key, value, conf in (("first", s.s1, s.s1_conf), ("total", s.st, s.st_conf)):
        np.testing.assert_allclose(view.bars[key].opts["x0"], 0.0)
        np.testing.assert_allclose(view.bars[key].opts["width"], value[order])
        np.testing.assert_allclose(view.whiskers[key].opts["x"], value[order])
        np.testing.assert_allclose(view.whiskers[key].opts["width"], 2 * conf[order])
        np.testing.assert_allclose(view.whiskers[key].opts["y"], view.bars[key].opts["y"])
    assert (view.bars["first"].opts["y"] > view.bars["total"].opts["y"]).all()
    entries = {label.text: sample.item for sample, label in view.legend.items}
    assert set(entries) == set(LEGEND.values())
    drawn = view.bar_plot.getPlotItem().items
    for item in entries.values():
        assert item in drawn and item.isVisible() and len(item.opts["width"]) == 3
    ticks = view.bar_plot.getPlotItem().getAxis("left")._tickLevels[0]
    assert [t for _, t in ticks] == view.sobol_order
    np.testing.assert_allclose([y for y, _ in ticks], [2, 1, 0])
    np.testing.assert_allclose(view.bars["first"].opts["y"] - 0.19, [2, 1, 0])


SIX = """
[study]
design = "sobol"
samples = 8
trials = 10
[vary]
detect_min = { min = 1, max = 30 }
checkpoint_write_s = { min = 1, max = 300, scale = "log" }
checkpoint_interval_min = { min = 10, max = 120 }
restart_min = { min = 1, max = 30 }
planned_per_day = { min = 0, max = 2 }
gpu_hour_cost_usd = { min = 1, max = 3 }
"""


def test_six_long_input_names_each_get_a_row_and_fit_beside_the_bars(qtbot, tmp_path, monkeypatch):
    from PySide6.QtGui import QFontMetricsF

    import planner_gui.ui.study_view as sv

    monkeypatch.setattr(sv, "NAME_WIDTH", 70.0)
    view = open_view(qtbot, make_results(tmp_path, SIX, "six"))
    axis = view.bar_plot.getPlotItem().getAxis("left")
    ticks = axis._tickLevels[0]
    metrics = QFontMetricsF(axis.font())
    assert len(ticks) == 6 and len({t for _, t in ticks}) == 6  # every input labelled, none twice
    for (_, text), name in zip(ticks, view.sobol_order, strict=True):
        assert metrics.horizontalAdvance(text) <= 70.0
        if metrics.horizontalAdvance(name) > 70.0:
            assert "\u2026" in text and text[0] == name[0] and text[-1] == name[-1]  # elided in the middle
        else:
            assert text == name
    # rows far enough apart for a line of text each
    view.resize(1100, 620)
    qtbot.waitUntil(lambda: view.bar_plot.height() > 300, timeout=2_000)
    vb = view.bar_plot.getPlotItem().getViewBox()
    spacing = abs(vb.mapViewToScene(pg_point(0, 1)).y() - vb.mapViewToScene(pg_point(0, 0)).y())
    assert spacing >= metrics.height()


def pg_point(x: float, y: float):
    from PySide6.QtCore import QPointF

    return QPointF(x, y)


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


def colour_bar_ticks(view) -> list[tuple[float, str]]:
    axis = view.colorbar.axis
    lo, hi = view.colorbar.levels()
    values = [v for _, vs in axis.tickValues(lo, hi, axis.size().height()) for v in vs]
    return list(zip(values, axis.tickStrings(values, 1.0, 1.0), strict=True))


def test_colour_bar_numbers_are_compact_and_beside_its_title(qtbot, tmp_path):
    from PySide6.QtGui import QFontMetricsF

    from planner_gui.core.util import fmt

    view = open_view(qtbot, make_results(tmp_path, SOBOL, "sobol"))
    axis = view.colorbar.axis
    for out, check in (
        ("lost_cost_usd", fmt.money),  # $12.5 M
        ("lost_gpu_hours.mean", fmt.compact),  # 4.5 M
        ("interruptions.mean", fmt.compact),
    ):
        view.choose("detect_min", "checkpoint_write_s", out)
        ticks = colour_bar_ticks(view)
        texts = [t for _, t in ticks]
        assert len(ticks) >= 2 and len(set(texts)) == len(texts), (out, texts)
        if len({check(v) for v, _ in ticks}) == len(ticks):
            assert texts == [check(v) for v, _ in ticks], (out, texts)
        else:  # close ticks: the same style, with more digits
            for v, t in ticks:
                num, _, suffix = t.removeprefix("$").partition(" ")
                assert t.startswith("$") == (check is fmt.money), t
                assert float(num) * {"": 1, "k": 1e3, "M": 1e6, "B": 1e9}[suffix] == pytest.approx(v, rel=1e-9), t
        # the axis holds its widest number, the tick and the title side by side
        widest = max(QFontMetricsF(axis.font()).horizontalAdvance(t) for t in texts)
        need = widest + axis.style["tickTextOffset"][0] + axis.style["tickLength"] + axis.label.boundingRect().height()
        qtbot.waitUntil(lambda need=need: axis.width() >= need, timeout=2_000)  # once the layout has settled
    # close ticks get more digits rather than repeated labels
    from planner_gui.ui.study_view import tick_strings

    assert tick_strings([1_234_000.0, 1_234_500.0], fmt.compact) == ["1.234 M", "1.2345 M"]
    assert tick_strings([1_200_000.0, 1_250_000.0], fmt.money) == ["$1.2 M", "$1.25 M"]
    assert tick_strings([410.0, 410.5, 411.0], fmt.compact) == ["410", "410.5", "411"]


def test_sampled_ranges_are_binned_over_the_declared_range_alike_in_a_partial_run(qtbot, tmp_path):
    from planner_gui.ui.study_view import study_heatmap

    path = make_results(tmp_path, SOBOL, "sobol")
    full = read_results(path)
    part = read_results(path)
    part.columns = {c: v[:7] for c, v in part.columns.items()}  # the first 7 rows: a run cut short
    a = study_heatmap(full, "detect_min", "checkpoint_write_s", "goodput.mean")
    b = study_heatmap(part, "detect_min", "checkpoint_write_s", "goodput.mean")
    assert a.x_labels == b.x_labels and a.y_labels == b.y_labels and a.x_ticks == b.x_ticks
    # the declared ends, both labelled (1 to 30; log 1 to 300), not the data's min and max
    assert a.x_ticks[0] == (0.0, "1") and a.x_ticks[-1] == (10.0, "30")
    assert a.y_ticks[0] == (0.0, "1") and a.y_ticks[-1] == (10.0, "300")
    assert a.x_labels[0] == "1 to 3.9" and a.y_labels[-1] == "170 to 300"
    assert a.counts.sum() == full.rows and b.counts.sum() == 7
    # every scenario is in the cell whose edges hold it
    d = full.numeric("detect_min")
    edges = np.linspace(1, 30, 11)
    np.testing.assert_array_equal(a.counts.sum(axis=0), np.histogram(d, edges)[0])


ONE = """
[study]
trials = 20
[vary]
gpus = [1024]
"""


def test_a_study_of_one_value_is_labelled_and_coloured_mid_range(qtbot, tmp_path):
    from planner_gui.ui.study_view import NO_INPUT

    path = make_results(tmp_path, ONE, "one")
    view = open_view(qtbot, path)
    assert [view.y_box.itemText(i) for i in range(view.y_box.count())] == [NO_INPUT]
    assert view.image.image.shape == (1, 1)
    ticks = view.heat_plot.getPlotItem().getAxis("bottom")._tickLevels[0]
    assert [t for _, t in ticks] == ["1,024"]
    value = float(view.image.image[0, 0])
    lo, hi = view.colorbar.levels()
    assert lo < value < hi and lo >= 0 and hi <= 1  # not the lowest colour; goodput stays a share
    assert "over 1 input," in view.title.text() and view.cell_note.text() == "1 scenario per cell"


def test_a_study_without_inputs_says_so(qtbot, tmp_path):
    from planner_gui.ui.study_view import StudyView

    res = read_results(make_results(tmp_path, ONE, "one"))
    res.meta["inputs"] = []
    view = StudyView()
    qtbot.addWidget(view)
    view.show_results(res, "No Sobol indices: none")
    view.show()
    qtbot.waitUntil(lambda: view.results is not None)  # (shown once its plots are built)
    assert not view.heat_plot.isVisible() and view.no_heatmap.isVisible()
    assert "varies no input" in view.no_heatmap.text()


def test_up_and_across_never_show_the_same_input(qtbot, tmp_path):
    view = open_view(qtbot, make_results(tmp_path, SOBOL, "sobol"))
    view.choose("detect_min", "checkpoint_write_s")
    view.x_box.setCurrentText("checkpoint_write_s")  # Across takes Up's input: they swap
    assert (view.x_box.currentText(), view.y_box.currentText()) == ("checkpoint_write_s", "detect_min")
    view.y_box.setCurrentText("checkpoint_write_s")
    assert (view.x_box.currentText(), view.y_box.currentText()) == ("detect_min", "checkpoint_write_s")
    assert view.heat.x == "detect_min" and view.heat.y == "checkpoint_write_s"


def test_a_study_is_read_in_a_compute_process_that_ends_once_it_is_read(qtbot, tmp_path):
    """300,000 rows of CSV read on a thread of the window's interpreter stalled the window for 9 s (every call of
    the window into Qt waited for the interpreter lock): the file is read in a process of its own."""
    import os

    from planner_gui.ui.study_view import StudyView

    path = make_results(tmp_path, GRID, "grid")
    view = StudyView()
    qtbot.addWidget(view)
    view.load(path)
    jobs = view._jobs
    assert jobs is not None
    qtbot.waitUntil(lambda: jobs._controller._process is not None, timeout=30_000)
    assert jobs._controller._process.pid != os.getpid()
    qtbot.waitUntil(lambda: not view.loading and view.results is not None, timeout=30_000)
    qtbot.waitUntil(lambda: not jobs.alive, timeout=10_000)
    assert view._jobs is None and view.results.rows == design_size(read_spec(tmp_path / "grid.toml"))
    from planner_gui.core.study.summary import first_axes

    # The first heatmap was computed there too (a million rows' took 16 ms of the window's thread): it only draws.
    assert ("heatmap", *first_axes(view.results), "goodput.mean") in view.results.derived
