"""The spare-pool sizing window: controls change what their labels name, and every legend entry is drawn."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from planner_gui.core.model.scenario import Scenario

pytestmark = pytest.mark.gui


@pytest.fixture
def dialog(qtbot):
    from planner_gui.ui.spares_view import SparesDialog

    d = SparesDialog(Scenario(gpus=16_384, trials=40, days=10.0))
    qtbot.addWidget(d)
    qtbot.waitUntil(lambda: d.sizing_result is not None, timeout=60_000)
    yield d
    d.done(0)  # as closing it does (never shown, close() would not): its worker thread ends


#: control -> (new value, the Spares field it must change)
CONTROLS = {
    "swap_min": (7.0, "swap_min"),
    "repair:GPU": (12.0, "repair_hours"),
    "repair:Host": (3.0, "repair_hours"),
    "repair:Network": (9.0, "repair_hours"),
    "repair:Unplanned Maintenance": (1.0, "repair_hours"),
    "repair_law": ("lognormal", "repair_sigma"),
    "recovery_mode": ("continue", "recovery_mode"),
    "replica_gpus": (2048, "replica_gpus"),
    "continue_stall_min": (5.0, "continue_stall_min"),
    "min_gpus": (8000, "min_gpus"),
}


@pytest.mark.parametrize("name", list(CONTROLS))
def test_each_control_changes_its_field_only(dialog, name):
    value, field = CONTROLS[name]
    before = dataclasses.asdict(dialog.spares)
    w = dialog.controls[name]
    if name in ("recovery_mode", "repair_law"):
        w.setCurrentText(value)
    else:
        w.setValue(value)
    after = dataclasses.asdict(dialog.spares)
    changed = {k for k in before if before[k] != after[k]}
    assert changed == {field}
    if field == "repair_hours":
        cat = name.split(":", 1)[1]
        assert dict(after["repair_hours"])[cat] == value
        others = {k: v for k, v in dict(after["repair_hours"]).items() if k != cat}
        assert all(dict(before["repair_hours"]).get(k, v) == v for k, v in others.items())
    elif name == "repair_law":
        assert after["repair_sigma"] == dialog.controls["repair_sigma"].value()
    else:
        assert after[field] == value


def test_repair_sigma_applies_to_lognormal_repairs_and_zero_is_a_fixed_length(dialog):
    sigma = dialog.controls["repair_sigma"]
    assert dialog.spares.repair_sigma is None and not sigma.isEnabled()
    dialog.controls["repair_law"].setCurrentText("lognormal")
    assert sigma.isEnabled()
    before = dataclasses.asdict(dialog.spares)
    sigma.setValue(0.0)
    after = dataclasses.asdict(dialog.spares)
    assert {k for k in before if before[k] != after[k]} == {"repair_sigma"} and after["repair_sigma"] == 0.0
    dialog.controls["repair_law"].setCurrentText("exponential")
    assert dialog.spares.repair_sigma is None and not sigma.isEnabled()


def test_every_legend_entry_is_drawn(dialog):
    for plot in (dialog.plot_goodput, dialog.plot_nospare, dialog.plot_cost):
        for sample, label in plot.legend.items:
            item = sample.item
            xs, _ = item.getData()
            assert xs is not None and len(xs) > 0, label.text


def test_a_change_recomputes_and_marks_the_pools(dialog, qtbot):
    first = dialog.sizing_result
    dialog.controls["repair:GPU"].setValue(96.0)
    qtbot.waitUntil(lambda: dialog.sizing_result is not first, timeout=60_000)
    r = dialog.sizing_result
    assert r.cheapest in r.spare_nodes
    assert "99%" in dialog.summary.text()
    # Longer GPU repairs need a larger pool.
    assert r.recommended > first.recommended


def test_the_view_menu_opens_the_sizing_window(make_window, qtbot):
    from PySide6.QtGui import QAction

    from planner_gui.ui.spares_view import SparesDialog

    win = make_window()
    act = win.findChild(QAction, "actionSparesSizing")
    assert act is not None and "Spare-Pool" in act.text()
    act.trigger()
    dlg = win.findChild(SparesDialog)
    assert dlg is not None and dlg.scenario == win.scenario()
    qtbot.waitUntil(lambda: dlg.sizing_result is not None, timeout=120_000)
    dlg.close()


def test_inputs_that_cannot_be_computed_clear_the_curves_and_their_legends(dialog, qtbot):
    """A replica that is not whole nodes cannot be computed: the old curves (other inputs) go, and with them
    the legends that named them; valid inputs draw again. Shrinking is off in continue mode."""
    dialog.controls["recovery_mode"].setCurrentText("continue")
    assert not dialog.controls["min_gpus"].isEnabled()
    dialog.controls["replica_gpus"].setValue(1020)
    qtbot.waitUntil(lambda: "Cannot compute" in dialog.summary.text(), timeout=10_000)
    assert dialog.sizing_result is None
    for plot in (dialog.plot_goodput, dialog.plot_nospare, dialog.plot_cost):
        assert not plot.legend.isVisible()
        for item in plot.listDataItems():
            xs, _ = item.getData()
            assert xs is None or len(xs) == 0
    dialog.controls["replica_gpus"].setValue(1024)
    qtbot.waitUntil(lambda: dialog.sizing_result is not None, timeout=60_000)
    assert all(p.legend.isVisible() for p in (dialog.plot_goodput, dialog.plot_nospare, dialog.plot_cost))
    assert "never waits" in dialog.summary.text()


def test_each_marker_can_be_told_from_the_curves_it_sits_on(dialog):
    """The cheapest pool's marker was the cost curve's green: on the curve and in the legend it could not be
    told from it. Every marker's fill is a colour no curve of its plot is drawn in."""
    import pyqtgraph as pg

    plot = dialog.plot_cost
    curve_colours = {
        item.opts["pen"].color().name() for item in plot.listDataItems() if isinstance(item, pg.PlotDataItem)
    }
    for name, mark in dialog.marks.items():
        fill = mark.opts["brush"].color().name()
        assert fill not in curve_colours, (name, fill, curve_colours)


def test_a_views_jobs_run_in_a_compute_process_and_only_the_newest_is_delivered(qtbot):
    """The spares dialogs computed on threads of the window's interpreter (the window stalled 280 ms at a time
    while both did); now each view has a compute process of its own: the newest request is answered, an older
    one never, and a failure is the model's one line."""
    import os

    from PySide6.QtCore import QObject

    from planner_gui.core.model.spares import Spares
    from planner_gui.ui.jobs import JobFailed, JobRunner

    owner = QObject()
    got = []
    runner = JobRunner(owner, lambda req, value: got.append((req, value)))
    sc = Scenario(gpus=16_384, trials=20, days=5.0).replace(spares=Spares(spare_nodes=4))
    first = runner.run("spares_modes", sc.replace(gpus=32_768))
    newest = runner.run("spares_modes", sc)
    qtbot.waitUntil(lambda: bool(got), timeout=60_000)
    assert [req for req, _ in got] == [newest] and first < newest
    counts, comparison = got[0][1]
    assert counts.size >= 2 and set(comparison) >= {"restart", "continue"}
    assert runner._controller._process.pid != os.getpid()
    runner.run("spares_modes", sc.replace(spares=Spares(spare_nodes=4, min_gpus=999_999)))
    qtbot.waitUntil(lambda: len(got) == 2, timeout=60_000)
    assert isinstance(got[1][1], JobFailed) and "min_gpus: must not exceed the job's 16,384 GPUs" in str(got[1][1])
    assert not str(got[1][1]).startswith("ValueError")
    runner.run("no_such_job")
    qtbot.waitUntil(lambda: len(got) == 3, timeout=60_000)
    assert isinstance(got[2][1], JobFailed) and "no such computation" in str(got[2][1])
    runner.shutdown()
    qtbot.waitUntil(lambda: not runner.alive, timeout=10_000)


def test_shutting_a_views_compute_process_down_never_waits_for_it(qtbot):
    """Closing a spares dialog while it computed waited for its process to quit, up to 300 ms on the window's
    thread (and the study window, done with its process, paused 180 ms): the process is asked to quit and is
    waited for on a thread of its own; nothing of the job it was running is delivered."""
    from PySide6.QtCore import QObject

    from planner_gui.ui.jobs import JobRunner

    owner = QObject()
    got = []
    runner = JobRunner(owner, lambda req, value: got.append(value))
    runner.run("spares_modes", Scenario(gpus=65_536, trials=200, days=30.0))
    qtbot.waitUntil(lambda: runner._controller._process is not None, timeout=30_000)
    process = runner._controller._process
    qtbot.wait(300)  # (computing)
    runner.shutdown()
    assert process.poll() is None and runner.alive  # still quitting: shutdown() did not wait for it
    qtbot.waitUntil(lambda: not runner.alive, timeout=10_000)
    assert process.poll() is not None
    qtbot.wait(50)
    assert got == []
    owner.deleteLater()


def test_a_views_compute_process_ends_with_its_owner_and_delivers_nothing_after(qtbot):
    """An owner deleted without being closed (a dialog never shown): its compute process is stopped, and a job
    that was running reports nothing; a runner shut down starts nothing."""
    from PySide6.QtCore import QObject

    from planner_gui.ui.jobs import JobRunner

    owner = QObject()
    got = []
    runner = JobRunner(owner, lambda req, value: got.append(value))
    runner.run("spares_modes", Scenario(gpus=65_536, trials=200, days=30.0))
    qtbot.waitUntil(lambda: runner._controller._process is not None, timeout=30_000)
    owner.deleteLater()
    qtbot.waitUntil(lambda: not runner.alive, timeout=10_000)
    qtbot.wait(100)
    assert got == []
    before = runner.request
    assert runner.run("spares_modes", Scenario(gpus=16_384, trials=20)) == before and not runner.busy


def test_the_spares_dialogs_axes_repaint_from_a_pixmap(dialog, qtbot):
    """pyqtgraph's axes replay their grid lines and labels at every repaint: with a grid on every tick level, each
    repaint of these dialogs took 30-50 ms while they computed. Every axis is the window's own, which draws a
    pixmap while it does not change."""
    import pyqtgraph as pg

    from planner_gui.ui.plot_items import Axis
    from planner_gui.ui.spares_modes import SparesModesDialog

    modes = SparesModesDialog(Scenario(gpus=16_384, trials=20, days=5.0), None)
    qtbot.addWidget(modes)
    qtbot.waitUntil(lambda: modes.ready and dialog.ready)
    for view in (dialog, modes):
        found = [i for i in view.plots.scene().items() if isinstance(i, pg.AxisItem) and i.isVisibleTo(None)]
        assert len(found) >= 4
        assert all(isinstance(item, Axis) for item in found), [type(i).__name__ for i in found]
        # Grid lines at two tick levels, not three: the third doubled the time to redraw the axes on new results.
        assert all(item.grid and item.style["maxTickLevel"] == 1 for item in found)
    modes.done(0)


def test_the_sizing_window_names_the_scenario_it_was_opened_on(dialog):
    """It does not follow the main window's later changes (its inputs are what-ifs of its own): a planner who
    moved the main window to 100,000 GPUs read 2,048 job nodes with nothing to say they were 16,384 GPUs'."""
    assert "16,384 GPUs, 10 days (the scenario when opened)" in dialog.windowTitle()
    assert dialog.summary.text().startswith("For 16,384 GPUs over 10 days, the scenario as it was when this opened")


def test_a_view_whose_compute_process_kept_dying_starts_again_on_its_next_request(qtbot):
    """Recovery Strategies killed four times in ten seconds said computing was paused, and only closing it and
    opening it again computed anything: the view's next request (a changed input) starts a fresh process."""
    from PySide6.QtCore import QObject

    from planner_gui.ui.jobs import JobFailed, JobRunner

    owner = QObject()
    got = []
    runner = JobRunner(owner, lambda req, value: got.append(value))
    runner._controller.MAX_DEATHS = 0  # (the first death gives up, as the fourth in a minute does)
    runner.run("spares_modes", Scenario(gpus=65_536, trials=200, days=30.0))
    qtbot.waitUntil(lambda: runner._controller._process is not None, timeout=30_000)
    runner._controller._process.kill()
    qtbot.waitUntil(lambda: bool(got), timeout=30_000)
    assert isinstance(got[-1], JobFailed) and runner.gave_up
    runner.run("spares_modes", Scenario(gpus=16_384, trials=20, days=5.0))
    qtbot.waitUntil(lambda: len(got) == 2, timeout=60_000)
    assert not isinstance(got[-1], JobFailed) and not runner.gave_up
    runner.shutdown()
    qtbot.waitUntil(lambda: not runner.alive, timeout=10_000)
    owner.deleteLater()


def test_the_plots_are_built_after_the_dialog_and_a_result_that_came_first_is_drawn_on_them(qtbot):
    """The three plots are built a turn of the event loop at a time after the dialog (building them at once held the
    window 60-110 ms); a result that arrives before they are is drawn when they are, and only then counts as
    shown."""
    from planner_gui.core.session.jobs import spares_sizing
    from planner_gui.ui.spares_view import WINDOW_POINTS, SparesDialog

    sc = Scenario(gpus=16_384, trials=20, days=5.0)
    d = SparesDialog(sc)
    qtbot.addWidget(d)
    assert not d.ready and not d.curves  # nothing of the plots yet: the constructor returned first
    d._jobs.cancel()
    result = spares_sizing(sc, d.spares, WINDOW_POINTS, should_stop=None, progress=None)
    d._show(result)
    assert d.sizing_result is None  # not drawn yet
    qtbot.waitUntil(lambda: d.ready, timeout=5_000)
    assert d.sizing_result is result
    x, y = d.curves["goodput"].getData()
    np.testing.assert_allclose(x, result.spare_nodes.astype(float))
    np.testing.assert_allclose(y, 100 * result.goodput)
    assert [p.titleLabel.text for p in (d.plot_goodput, d.plot_nospare, d.plot_cost)] == [
        "Goodput",
        "Failures that find no spare",
        "Total cost: lost GPU-hours + spare pool",
    ]
    d.done(0)


def test_without_a_closed_form_the_sizing_names_no_line_it_cannot_draw_and_gives_the_simulated_pool(qtbot):
    """In a burn-in there is no M/G/infinity line (every point NaN): the legend does not name it, and the pool where
    99 % of failures find a spare is the simulated one, not the closed form at the base rates (86 nodes beside a
    marker at 169 on h100-100k-plan)."""
    from planner_gui.core.session.jobs import spares_sizing
    from planner_gui.core.theory.profiles import burn_in_profile
    from planner_gui.ui.spares_view import SparesDialog

    sc = Scenario(gpus=16_384, trials=20, days=5.0).replace(rate_profile=burn_in_profile(0.7, 2, 5.0), new_cluster=True)
    d = SparesDialog(sc)
    qtbot.addWidget(d)
    d._jobs.cancel()
    result = spares_sizing(sc, d.spares, 6, should_stop=None, progress=None)
    assert np.isnan(result.p_no_spare_expected).all()
    d._show(result)
    qtbot.waitUntil(lambda: d.sizing_result is result, timeout=5_000)
    assert [label.text for _, label in d.plot_nospare.legend.items] == ["Monte Carlo"]
    text = d.summary.text()
    assert f"(Monte Carlo: the simulated failures' needs): {result.recommended:,} nodes" in text
    assert "M/G/infinity at the scenario's base rates" in text
    d.done(0)


def test_a_priced_pool_is_drawn_as_priced_beside_its_gpu_hours(qtbot):
    """With a node price the pool's curve is its price's share over the window, and a dotted line (named only then)
    is what its GPU-hours would cost at the price per GPU-hour; the total is the lost GPU-hours plus the priced pool."""
    from planner_gui.core.model.spares import Spares
    from planner_gui.core.session.jobs import spares_sizing
    from planner_gui.ui.spares_view import SparesDialog

    sc = Scenario(gpus=16_384, trials=20, days=5.0, spares=Spares(spare_nodes=8, node_price_usd=250_000.0))
    d = SparesDialog(sc)
    qtbot.addWidget(d)
    d._jobs.cancel()
    result = spares_sizing(sc, d.spares, 6, should_stop=None, progress=None)
    d._show(result)
    qtbot.waitUntil(lambda: d.sizing_result is result, timeout=5_000)
    names = [label.text for _, label in d.plot_cost.legend.items]
    assert "pool as GPU-hours at the price" in names
    np.testing.assert_allclose(d.curves["pool_cost"].getData()[1], result.pool_cost_usd / 1e6)
    np.testing.assert_allclose(
        d.curves["pool_gpu_hours"].getData()[1], result.spare_gpu_hours * sc.gpu_hour_cost_usd / 1e6
    )
    for sample, label in d.plot_cost.legend.items:  # every entry drawn
        assert len(sample.item.getData()[0]) > 0, label.text
    d.done(0)
    plain = SparesDialog(Scenario(gpus=16_384, trials=20, days=5.0, spares=Spares(spare_nodes=8)))
    qtbot.addWidget(plain)
    plain._jobs.cancel()
    r2 = spares_sizing(plain.scenario, plain.spares, 6, should_stop=None, progress=None)
    plain._show(r2)
    qtbot.waitUntil(lambda: plain.sizing_result is r2, timeout=5_000)
    assert "pool as GPU-hours at the price" not in [label.text for _, label in plain.plot_cost.legend.items]
    plain.done(0)


def test_the_sizing_says_how_far_it_has_got_while_it_computes(qtbot, monkeypatch):
    """A large cluster's sizing takes minutes on a busy machine: the summary says how far it has got, as Recovery
    Strategies does, rather than a bare "computing..." until the plots appear."""
    from planner_gui.ui.spares_view import SparesDialog

    shown: list[str] = []
    d = SparesDialog(Scenario(gpus=16_384, trials=200, days=30.0))
    qtbot.addWidget(d)
    real = d.summary.setText
    monkeypatch.setattr(d.summary, "setText", lambda text: (shown.append(text), real(text)))
    try:
        qtbot.waitUntil(lambda: d.sizing_result is not None, timeout=120_000)
    finally:
        d.done(0)
    done = [t for t in shown if t.startswith("computing (") and t.endswith("% done)...")]
    assert done, shown
    fractions = [float(t.removeprefix("computing (").removesuffix("% done)...")) for t in done]
    assert fractions == sorted(fractions) and fractions[0] >= 0.0 and fractions[-1] <= 100.0
    assert not shown[-1].startswith("computing")  # the result's summary replaces it


def test_no_legend_covers_a_curve_or_a_marker(qtbot):
    """At 160,000 GPUs the cost plot's legend lay on the falling cost curve, and its star sample, on the curve,
    read as a second cheapest pool. On the dialog as shown, no point of a plot's curves or markers is under its
    legend."""
    from PySide6.QtCore import QPointF

    from planner_gui.ui.spares_view import SparesDialog

    d = SparesDialog(Scenario(gpus=160_000, trials=40, days=54.0))
    qtbot.addWidget(d)
    d.show()
    qtbot.waitExposed(d)
    try:
        qtbot.waitUntil(lambda: d.sizing_result is not None, timeout=120_000)
        qtbot.wait(50)  # (the ranges settle)
        for plot in (d.plot_goodput, d.plot_nospare, d.plot_cost):
            box = plot.legend.sceneBoundingRect()
            for item in [*plot.listDataItems(), *(m for m in d.marks.values() if plot is d.plot_cost)]:
                xs, ys = item.getData()
                if xs is None:
                    continue
                for x, y in zip(xs, ys):
                    if np.isfinite(y):
                        at = plot.vb.mapViewToScene(QPointF(float(x), float(y)))
                        assert not box.contains(at), (plot.titleLabel.text, float(x), float(y))
        # The room is made for the legend, not against the planner: a view they zoomed stays zoomed on a resize,
        # and one they did not keeps its room at the new size.
        d.plot_cost.setYRange(100.0, 200.0, padding=0)
        before = d.plot_goodput.vb.viewRange()[1]
        d.resize(d.width() - 120, d.height() - 80)
        qtbot.wait(100)
        assert d.plot_cost.vb.viewRange()[1] == pytest.approx([100.0, 200.0])
        assert d.plot_goodput.vb.viewRange()[1] != pytest.approx(before)
    finally:
        d.done(0)
