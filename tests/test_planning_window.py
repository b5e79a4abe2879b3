"""The window's planning answers against what their labels say: the Training run controls, the time to train
in the summary, the Planning tab's days and cost plots, the sensitivity bars, pinned scenarios, the report."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from PySide6.QtWidgets import QAbstractSlider
from test_gui import find, settle

from planner_gui.core.analysis.sensitivity import sensitivity
from planner_gui.core.files.presets import load_preset
from planner_gui.core.model.scenario import Training
from planner_gui.ui.plots import PIN_COLORS
from planner_gui.ui.training_controls import FLOPS_UNIT, GPU_HOURS_UNIT

pytestmark = pytest.mark.gui


def _training_window(make_window, qtbot, **changes):
    sc = load_preset("llama3-405b").replace(training=Training(), trials=200, **changes)
    win = make_window(sc, restore=False)
    win.tabs.setCurrentWidget(win.planning)  # the Planning tab draws only while it is shown
    settle(qtbot, win)
    return win


def test_training_switch_adds_and_removes_the_training_section(make_window, qtbot):
    win = make_window(restore=False)
    assert win.scenario().training is None
    assert not win.summary.train.isVisible()
    win.controls.training.enabled.setChecked(True)
    assert win.scenario().training == Training()
    settle(qtbot, win)
    assert win.summary.train.isVisible()
    win.controls.training.enabled.setChecked(False)
    assert win.scenario().training is None
    settle(qtbot, win)
    assert not win.summary.train.isVisible()


@pytest.mark.parametrize(
    ("slider", "field", "unit"),
    [
        ("trainFlopsSlider", "train_flops", FLOPS_UNIT),
        ("peakTflopsSlider", "peak_tflops", 1.0),
        ("mfuSlider", "mfu", 0.01),
    ],
)
def test_each_training_slider_moves_its_field_only(make_window, qtbot, slider, field, unit):
    win = _training_window(make_window, qtbot)
    before = win.scenario()
    s = find(win, QAbstractSlider, slider)
    control = next(c for c in win.controls.training.controls if c.slider is s)
    s.setValue(s.value() + 100)
    after = win.scenario()
    assert getattr(after.training, field) == pytest.approx(control.value() * unit, rel=1e-12)
    assert getattr(after.training, field) != getattr(before.training, field)
    # Nothing else of the scenario changed (the name may follow the inputs).
    assert after.replace(training=before.training, name=before.name) == before
    others = {f.name for f in dataclasses.fields(Training)} - {field}
    assert all(getattr(after.training, k) == getattr(before.training, k) for k in others)


def test_work_given_as_gpu_hours_keeps_the_work_and_its_slider_moves_it(make_window, qtbot):
    win = _training_window(make_window, qtbot)
    work = win.scenario().training.gpu_hours
    win.controls.training.mode.setCurrentIndex(1)
    t = win.scenario().training
    assert t.train_flops is None and t.compute_gpu_hours == pytest.approx(work, rel=1e-12)
    assert win.controls.training.hours.isVisible() and not win.controls.training.flops.isVisible()
    s = find(win, QAbstractSlider, "computeGpuHoursSlider")
    s.setValue(s.value() + 100)
    t2 = win.scenario().training
    assert t2.compute_gpu_hours == pytest.approx(win.controls.training.hours.value() * GPU_HOURS_UNIT, rel=1e-12)
    assert t2.compute_gpu_hours != pytest.approx(work)
    win.controls.training.mode.setCurrentIndex(0)  # back to FLOPs: the same work at this peak and MFU
    assert win.scenario().training.gpu_hours == pytest.approx(t2.compute_gpu_hours, rel=1e-9)


def test_summary_time_to_train_reads_the_simulated_days_and_cost(make_window, qtbot):
    win = _training_window(make_window, qtbot)
    ttt = win.last_result.main.time_to_train
    days = ttt.hours / 24.0
    assert win.summary.train.value.text() == f"{days.mean():,.1f} days"
    detail = win.summary.train.detail.text()
    p05, p95 = np.percentile(days, [5, 95])
    assert f"p05-p95 {p05:,.1f}-{p95:,.1f}; ideal {ttt.work_hours / 24:,.1f}" in detail
    # Hand check of the headline: Llama 3 405B's 3.8e25 FLOPs at 989 TFLOP/s and 40 % MFU on 16,384 GPUs.
    assert ttt.work_hours / 24 == pytest.approx(3.8e25 / (989e12 * 0.40 * 3600) / 16_384 / 24, rel=1e-12)


def test_days_and_cost_plots_draw_the_curve_the_monte_carlo_and_the_current_count(make_window, qtbot):
    win = _training_window(make_window, qtbot)
    res = win.last_result
    curve = res.cost_curve
    assert curve is not None and len(curve.mc) >= 3
    panel = win.planning
    line, _spread, dots, marker = panel.curves["daysVsGpusPlot"]
    x, y = line.getData()
    np.testing.assert_allclose(x, np.log10(curve.gpus))
    np.testing.assert_allclose(10**y, curve.days, rtol=1e-12)
    _mx, my = dots.getData()
    np.testing.assert_allclose(10**my, [t.hours.mean() / 24 for t in curve.mc], rtol=1e-12)
    # The Monte Carlo agrees with the expected curve where both are drawn (within its standard error and
    # the renewal expectation's bounded offset of one interval / goodput).
    for t in curve.mc:
        i = int(np.flatnonzero(curve.gpus == t.gpus)[0])
        se = t.hours.std(ddof=1) / np.sqrt(len(t.hours)) / 24
        assert abs(t.hours.mean() / 24 - curve.days[i]) < 4 * se + 1.0 / 24, t.gpus
    cx, cy = marker.getData()
    assert 10 ** cx[0] == pytest.approx(res.main.scenario.gpus)
    assert 10 ** cy[0] == pytest.approx(res.main.time_to_train.hours.mean() / 24)
    # Cost: GPU-hours used x the price, and it follows the price box at once (the price is not computed).
    line_c, _, _, marker_c = panel.curves["costVsGpusPlot"]
    np.testing.assert_allclose(line_c.getData()[1] * 1e6, curve.days * 24 * curve.gpus * 2.5, rtol=1e-12)
    win.summary.price.setValue(5.0)
    np.testing.assert_allclose(line_c.getData()[1] * 1e6, curve.days * 24 * curve.gpus * 5.0, rtol=1e-12)
    assert marker_c.getData()[1][0] * 1e6 == pytest.approx(res.main.time_to_train.gpu_hours().mean() * 5.0)
    for name in ("daysVsGpusPlot", "costVsGpusPlot"):
        for sample, label in panel.plot(name).legend.items:
            assert sample.item.isVisible(), (name, label.text)
        assert panel.plot(name).legend.getLabel(panel.curves[name][0]).text == curve.line_name
        assert not panel.empty[name].isVisible()
        assert panel.plot(name).getAxis("left").isVisible() and panel.plot(name).getAxis("bottom").isVisible()
    assert f"Lines: {curve.expected_from}" in panel.note.text()


def test_a_curve_without_a_closed_form_is_named_for_what_it_is(make_window, qtbot, monkeypatch):
    """On the general engine (a new cluster's burn-in) the days line is the simulated time to train, not an
    exact expectation: the legend and the note say so, and the line is the curve's days."""
    from planner_gui.core.session import plan
    from planner_gui.core.theory.profiles import burn_in_profile

    monkeypatch.setattr(plan, "FULL", plan.Quality("full", None, 3, 6, 3, 10))
    monkeypatch.setattr(plan, "CURVE_TRAIN_TRIALS", 10)
    monkeypatch.setattr(plan, "SENSITIVITY_TRIALS", 6)
    sc = load_preset("llama3-405b").replace(
        trials=20, days=30.0, rate_profile=burn_in_profile(0.5, 10, 30.0), new_cluster=True,
        training=Training(train_flops=None, compute_gpu_hours=16_384 * 24 * 6.0),
    )  # fmt: skip
    res = plan.compute_plan(plan.PlanRequest(sc, plan.FULL))
    win = make_window(restore=False)
    win.tabs.setCurrentWidget(win.planning)
    panel = win.planning
    panel.show_result(res)  # (this result, drawn as the window draws one)
    curve = res.cost_curve
    assert curve is not None and curve.line_name == "simulated time to train (mean)"
    for name in ("daysVsGpusPlot", "costVsGpusPlot"):
        line = panel.curves[name][0]
        assert panel.plot(name).legend.getLabel(line).text == "simulated time to train (mean)"
    finite = np.isfinite(curve.days)
    np.testing.assert_allclose(10 ** panel.curves["daysVsGpusPlot"][0].getData()[1], curve.days[finite])
    assert "Lines: the simulated time to train at each count (the mean of 10 trials)" in panel.note.text()
    assert "exact" not in panel.note.text()


def test_without_training_the_cost_plots_say_how_to_get_them(make_window, qtbot):
    win = make_window(restore=False)
    win.tabs.setCurrentWidget(win.planning)
    settle(qtbot, win)
    for name in ("daysVsGpusPlot", "costVsGpusPlot"):
        assert win.planning.empty[name].isVisible()
        assert "Turn on Training run" in win.planning.empty[name].toPlainText()
        assert not win.planning.curves[name][0].isVisible()
        plot = win.planning.plot(name)
        assert not plot.getAxis("left").isVisible() and not plot.getAxis("bottom").isVisible()  # no empty ticks


def test_sensitivity_bars_are_the_exact_effects_and_follow_the_factor(make_window, qtbot):
    win = _training_window(make_window, qtbot)
    panel = win.planning
    for factor in (0.5, 0.25):
        panel.factor.setValue(factor)
        effects = sensitivity(win.scenario(), factor)
        assert [e.change for e in panel.effects] == [e.change for e in effects]
        widths = np.asarray(panel.bars.opts["width"])
        np.testing.assert_allclose(widths, [abs(100 * e.goodput_delta) for e in effects], rtol=1e-12)
        ticks = panel.plot("sensitivityPlot").getAxis("left")._tickLevels[0]
        assert [t[1] for t in ticks] == [e.change for e in effects]
    assert any("x0.25" in e.change for e in panel.effects)


def test_prices_price_the_levers_only_and_undo_takes_them_back(make_window, qtbot, monkeypatch):
    """Prices... lists the scenario's levers; a price typed there is the scenario's lever_prices and nothing else,
    starts no run, and puts the dollars saved per dollar on the lever's bar; a malformed price is said in the
    dialog, which stays open; Edit > Undo takes the prices back."""
    from PySide6.QtGui import QAction
    from PySide6.QtWidgets import QPushButton

    from planner_gui.core.analysis.sensitivity import levers
    from planner_gui.ui.prices_dialog import LeverPricesDialog

    win = _training_window(make_window, qtbot)
    panel = win.planning
    before = win.scenario()
    submitted = []
    monkeypatch.setattr(win.compute, "submit", lambda *a, **k: submitted.append(a))
    seen = {}

    def fill(dialog):
        names = [dialog.table.item(i, 0).text() for i in range(dialog.table.rowCount())]
        seen["levers"] = names
        dialog.table.item(names.index("restart"), 2).setText("1.5 million")
        dialog.accept()  # malformed: said, and the dialog stays
        seen["error"] = dialog.error.text() if not dialog.error.isHidden() else ""
        seen["result"] = dialog.result()
        dialog.table.item(names.index("restart"), 2).setText("$1,500,000")
        dialog.accept()
        return dialog.result()

    monkeypatch.setattr(LeverPricesDialog, "exec", fill)
    find(win, QPushButton, "leverPricesButton").click()
    assert seen["levers"] == [lv.name for lv in levers(before, panel.factor.value())]
    assert "restart" in seen["error"] and "1.5 million" in seen["error"] and seen["result"] == 0
    assert win.scenario().lever_prices == (("restart", 1.5e6),)
    assert win.scenario().replace(lever_prices=(), name=before.name) == before  # that input only (and the name)
    assert not submitted  # a price simulates nothing
    k = next(i for i, e in enumerate(panel.effects) if e.lever == "restart")
    e = panel.effects[k]
    assert e.price_usd == 1.5e6 and e.saved_per_usd == pytest.approx(-e.cost_delta_usd / 1.5e6, rel=1e-12)
    assert e.saved_per_usd > 0
    assert f"${e.saved_per_usd:,.2f} saved per $" in panel.bar_labels[k].toPlainText()
    assert all("per $" not in t.toPlainText() for i, t in enumerate(panel.bar_labels) if i != k)
    find(win, QAction, "undoAction").trigger()
    assert win.scenario().lever_prices == ()
    assert all("per $" not in t.toPlainText() for t in panel.bar_labels)


def test_pinned_scenarios_each_get_a_colour_a_legend_entry_and_a_column(make_window, qtbot):
    win = _training_window(make_window, qtbot)
    win.pin_baseline()
    win.inputs.update(gpus=100_000)
    settle(qtbot, win)
    win.pin_baseline()
    win.inputs.update(detect_min=1.0)
    settle(qtbot, win)
    assert len(win.plots.pinned) == 2
    assert [b.color for b in win.plots.pinned] == list(PIN_COLORS[:2])
    for name, legend in win.plots.legends.items():
        if legend is None:
            continue
        texts = [label.text for _, label in legend.items]
        assert sorted(t.split(":")[0] for t in texts if t.startswith("pinned ")) == ["pinned 1", "pinned 2"], name
    # Each overlay shows its own results.
    for label, res in win.pins:
        b = next(b for b in win.plots.pinned if b.label == label)
        np.testing.assert_allclose(b.items["goodputVsGpusPlot"].getData()[1], 100 * res.by_gpus.goodput_mean)
        assert b.items["goodputVsGpusPlot"].opts["pen"].color().name() == b.color
    table = win.planning.table
    assert table.columnCount() == 3
    rows = [table.verticalHeaderItem(i).text() for i in range(table.rowCount())]
    assert "GPUs" in rows and "detection" in rows  # the inputs that differ
    assert "GPUs" not in rows[rows.index("detection") + 1 :]
    win.clear_baseline()
    assert not win.plots.pinned and table.columnCount() == 1


def test_export_report_writes_the_current_and_pinned_scenarios(make_window, qtbot, tmp_path):
    win = _training_window(make_window, qtbot)
    win.pin_baseline()
    win.inputs.update(name="Option B", restart_min=2.0)
    settle(qtbot, win)
    path = win.export_report_to(tmp_path / "report.html")
    assert path is not None
    html = path.read_text()
    assert html.startswith("<!DOCTYPE html>") and "Option B" in html and win.pins[0][0] in html
    assert "<script" not in html.lower() and "http://" not in html.replace("http://www.w3.org", "")


# -- checkpoint storage: the write from size and bandwidth ---------------------------------------------------


def test_storage_switch_keeps_the_write_and_its_sliders_move_their_fields_only(make_window, qtbot):
    from planner_gui.ui.storage_controls import DEFAULT_STORAGE_GB_S

    win = make_window(restore=False)
    box = win.controls.storage
    write_before = win.scenario().write_s
    box.enabled.setChecked(True)
    st = win.scenario().storage
    assert st is not None and st.storage_gb_s == DEFAULT_STORAGE_GB_S
    assert win.scenario().write_s == pytest.approx(write_before, rel=1e-12)  # turning it on keeps the write
    write_control = win.controls.values["checkpoint_write_s"]
    assert not write_control.spin.isEnabled()
    for name, field in (
        ("checkpointGbPerGpuSlider", "checkpoint_gb_per_gpu"),
        ("storageGbPerSecondSlider", "storage_gb_s"),
    ):
        before = win.scenario()
        s = find(win, QAbstractSlider, name)
        s.setValue(s.value() + 100)
        after = win.scenario()
        control = next(c for c in box.controls if c.slider is s)
        assert getattr(after.storage, field) == pytest.approx(control.value(), rel=1e-12)
        assert getattr(after.storage, field) != getattr(before.storage, field)
        assert after.replace(storage=before.storage, name=before.name) == before
        # The write in use follows: GPUs x size / bandwidth, and the Checkpointing box shows it.
        assert after.write_s == pytest.approx(
            after.gpus * after.storage.checkpoint_gb_per_gpu / after.storage.storage_gb_s
        )
        assert write_control.value() == pytest.approx(after.write_s)
    box.enabled.setChecked(False)
    assert win.scenario().storage is None and write_control.spin.isEnabled()
    assert win.scenario().write_s == win.scenario().checkpoint_write_s


def test_storage_warns_when_it_cannot_keep_up_with_the_interval(make_window, qtbot):
    from planner_gui.core.model.scenario import Storage

    win = make_window(load_preset("llama3-405b").replace(checkpoint_interval_min=1.0), restore=False)
    box = win.controls.storage
    win.inputs.update(storage=Storage(checkpoint_gb_per_gpu=4.0, storage_gb_s=2_000.0))  # 32.8 s per write
    assert not box.warning.isVisible() or not box.warning.text()
    win.inputs.update(storage=Storage(checkpoint_gb_per_gpu=4.0, storage_gb_s=500.0))  # 131 s > 1 min
    assert box.warning.text().startswith("Storage cannot keep up")
    assert "16,384 GPUs x 4 GB at 500 GB/s" in box.warning.text()


def test_sensitivity_ranks_tier_levers_and_says_when_there_is_no_exact_model(make_window, qtbot):
    from planner_gui.core.model.scenario import Tiers

    sc = load_preset("h100-100k-inmemory").replace(trials=100)
    win = make_window(sc, restore=False)
    win.tabs.setCurrentWidget(win.planning)
    settle(qtbot, win)
    panel = win.planning
    changes = [e.change for e in panel.effects]
    assert changes == [e.change for e in sensitivity(win.scenario(), panel.factor.value())]
    assert any(c.startswith("snapshot stall") for c in changes)
    assert not panel.sensitivity_note.isVisibleTo(panel)
    win.inputs.update(tiers=Tiers(fast_enabled=True, fast_placement="same-domain"))
    settle(qtbot, win)
    # Both tiers restore: no closed form, so the full run's paired Monte Carlo ranks the levers, and says so.
    assert panel.result.effects is not None and panel.effects == panel.result.effects
    assert panel.sensitivity_note.isVisibleTo(panel) and "paired Monte Carlo" in panel.sensitivity_note.text()
    assert all(e.goodput_delta_se is not None for e in panel.effects)
    assert len(panel.bars.opts["width"]) == len(panel.effects) > 0


def test_scrolling_the_controls_never_changes_an_input(make_window, qtbot):
    """The wheel over any control in the panel, unfocused, scrolls the panel and changes nothing (a user
    scrolling down the panel passes over drop-down lists, spin boxes and sliders)."""
    from PySide6.QtCore import QPoint, QPointF, Qt
    from PySide6.QtGui import QWheelEvent
    from PySide6.QtWidgets import QAbstractSpinBox, QApplication, QComboBox

    win = make_window(restore=False)
    before = win.scenario()
    widgets = [
        *win.controls.findChildren(QComboBox),
        *win.controls.findChildren(QAbstractSpinBox),
        *win.controls.findChildren(QAbstractSlider),
    ]
    assert len([w for w in widgets if isinstance(w, QComboBox)]) >= 1
    for w in widgets:
        if not w.isEnabled():
            continue
        w.clearFocus()
        for delta in (120, -120):
            pos = QPointF(w.width() / 2, w.height() / 2)
            event = QWheelEvent(
                pos,
                w.mapToGlobal(pos),
                QPoint(0, 0),
                QPoint(0, delta),
                Qt.MouseButton.NoButton,
                Qt.KeyboardModifier.NoModifier,
                Qt.ScrollPhase.NoScrollPhase,
                False,
            )
            QApplication.sendEvent(w, event)
        assert win.scenario() == before, w.objectName() or type(w).__name__


def test_the_planning_tab_draws_the_newest_result_when_it_is_chosen(make_window, qtbot):
    """Hidden, the Planning tab is not drawn (it takes 15-25 ms per result); chosen, it shows the newest."""
    win = make_window(load_preset("llama3-405b").replace(training=Training(), trials=200), restore=False)
    settle(qtbot, win)
    win.inputs.update(gpus=32_768)
    settle(qtbot, win)
    assert win.tabs.currentWidget() is win.plots
    assert win.planning.result is None or win.planning.result.main.scenario.gpus != 32_768
    win.tabs.setCurrentWidget(win.planning)
    assert win.planning.result is win.last_result
    marker = win.planning.curves["daysVsGpusPlot"][3]
    assert 10 ** marker.getData()[0][0] == pytest.approx(32_768)


def test_pinning_during_a_preview_pins_the_full_run(make_window, qtbot):
    from planner_gui.core.session.plan import FULL, PREVIEW

    win = make_window(load_preset("llama3-405b").replace(trials=5_000, gpus=100_000), restore=False)
    settle(qtbot, win)
    win.inputs.update(detect_min=2.0)
    qtbot.waitUntil(
        lambda: win.last_result.request.scenario.detect_min == 2.0 and win.last_result.request.quality == PREVIEW,
        timeout=60_000,
    )
    win.pin_baseline()  # the preview is shown and the full run is on its way
    assert not win.pins and win._pin_pending
    settle(qtbot, win)
    qtbot.waitUntil(lambda: len(win.pins) == 1, timeout=10_000)
    ((_label, res),) = win.pins
    assert res.request.quality == FULL and res.main.scenario.detect_min == 2.0
    win.clear_baseline()
    assert win.status.text() == "No scenario pinned"


def test_a_run_shorter_than_a_day_reads_in_hours(make_window, qtbot):
    sc = load_preset("llama3-405b").replace(training=Training(train_flops=None, compute_gpu_hours=50_000.0), trials=200)
    win = make_window(sc, restore=False)
    settle(qtbot, win)
    ttt = win.last_result.main.time_to_train
    assert ttt.hours.mean() < 24
    assert win.summary.train.value.text().endswith(" h")
    assert "ideal 3.1 h" in win.summary.train.detail.text()  # 50,000 GPU-hours on 16,384 GPUs


def test_a_scenario_without_failures_draws_without_warnings(make_window, qtbot):
    """No unplanned interruptions at all (every rate 0, or a profile of 0): nothing to place on the log
    axes, and no NaN reaches a plot item (pyqtgraph warns "All-NaN slice" computing its bounds)."""
    import warnings

    base = load_preset("llama3-405b").replace(trials=200)
    for sc in (base.scale_rates(0.0), base.replace(rate_profile=((0.0, 0.0),))):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            win = make_window(sc, restore=False)
            settle(qtbot, win)
            for i in range(win.tabs.count()):
                win.tabs.setCurrentIndex(i)
                qtbot.wait(20)
            win.grab()
        assert not [w for w in caught if "NaN" in str(w.message)], [str(w.message) for w in caught]
        assert win.last_result.main.trials.unplanned.sum() == 0


def test_garbage_is_collected_on_the_gui_thread_only(make_window, qtbot):
    """A worker thread that collects garbage holding Qt objects deadlocks with the GUI thread (seen: an
    incident-log fit hung a test run). With a window, automatic collection is off and a GUI-thread timer
    collects cyclic garbage."""
    import gc
    import weakref

    from PySide6.QtCore import QObject

    win = make_window(restore=False)
    assert not gc.isenabled()

    class Cycle(QObject):
        pass

    obj = Cycle()
    obj.me = obj  # a reference cycle through a Qt object: only the cyclic collector frees it
    gone = weakref.ref(obj)
    del obj
    keep = [[] for _ in range(3 * gc.get_threshold()[0])]  # push generation 0 over its threshold
    qtbot.waitUntil(lambda: gone() is None, timeout=10_000)
    assert len(keep) > 0
    assert win.isVisible()


def test_a_lever_readout_signs_both_its_goodput_and_its_cost():
    """A lever's readout said "-0.00, $583 k": a loss too small for two decimals, and a cost without a sign."""
    from planner_gui.core.util.fmt import signed, signed_money

    assert signed(-1e-4) == "-0.0001" and signed(1.36) == "+1.36" and signed(0.0) == "0"
    assert signed_money(583_000) == "+$583 k" and signed_money(-44.2e6) == "-$44.2 M" and signed_money(0.2) == "$0"


# -- what is unsure: the tornado -------------------------------------------------------------------------


def _tornado_tab(win, qtbot):
    win.tabs.setCurrentWidget(win.planning)
    win.planning.questions.setCurrentWidget(win.planning.tornado)
    qtbot.waitUntil(lambda: win.planning.tornado.scenario is not None, timeout=10_000)
    return win.planning.tornado


def test_the_tornado_draws_each_unsure_inputs_two_ends_as_the_exact_model_gives_them(make_window, qtbot):
    from planner_gui.core.analysis.tornado import tornado

    win = _training_window(make_window, qtbot)
    view = _tornado_tab(win, qtbot)
    t = tornado(win.scenario())
    assert not view.button.isVisible() and "Exact" in view.note.text()
    lows = np.array([b.days_low for b in t.bars])
    highs = np.array([b.days_high for b in t.bars])
    np.testing.assert_allclose(np.asarray(view.low.opts["x0"]), np.minimum(lows, t.days), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(view.low.opts["width"]), np.abs(lows - t.days), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(view.high.opts["width"]), np.abs(highs - t.days), rtol=1e-12)
    assert view.base.value() == pytest.approx(t.days)
    ticks = view.widget.getPlotItem().getAxis("left")._tickLevels[0]
    assert [label for _, label in ticks] == [b.label for b in t.bars]
    labels = [label.text for _, label in view.legend.items]
    assert labels == ["low end", "high end", f"as entered: {t.days:,.2f}"]  # each drawn: the bars and the line
    assert view.base_sample.opts["pen"].color() == view.base.pen.color()
    assert all(item.isVisible() for item in (view.low, view.high, view.base))
    assert "days to train" in view.widget.getPlotItem().getAxis("bottom").labelText
    # A readout names the input, its ends and why; the restart bar follows the restart slider.
    assert "Table 4" in view._describe(0, [b.input for b in t.bars].index("training.mfu"))
    win.inputs.update(restart_min=10.0)
    settle(qtbot, win)
    bar = {b.input: b for b in view.shown.bars}["restart_min"]
    assert (bar.low, bar.value, bar.high) == (5.0, 10.0, 20.0)


def test_without_a_closed_form_the_tornado_is_simulated_when_asked_and_said_stale_after_a_change(make_window, qtbot):
    from planner_gui.core.analysis.tornado import tornado
    from planner_gui.core.model.spares import Spares
    from planner_gui.ui.tornado_view import TRIALS

    sc = load_preset("llama3-405b").replace(days=2.0, trials=30, spares=Spares(spare_nodes=4, swap_min=10.0))
    win = make_window(sc, restore=False)
    settle(qtbot, win)
    view = _tornado_tab(win, qtbot)
    assert view.button.isVisible() and "paired Monte Carlo" in view.note.text() and view.shown is None
    assert not view.low.isVisible()
    view.button.click()
    qtbot.waitUntil(lambda: view.shown is not None, timeout=120_000)
    want = tornado(win.scenario().replace(trials=min(30, TRIALS)))
    assert [b.input for b in view.shown.bars] == [b.input for b in want.bars]
    for got, exp in zip(view.shown.bars, want.bars):
        assert got.goodput_low == pytest.approx(exp.goodput_low, rel=1e-12)
        assert got.goodput_high == pytest.approx(exp.goodput_high, rel=1e-12)
    assert view.current() is view.shown and view.low.isVisible()
    win.inputs.update(detect_min=7.0)
    settle(qtbot, win)
    assert view.current() is None and "before your last change" in view.note.text()


def test_help_validation_shows_the_page_of_published_figures_once(make_window, qtbot):
    from PySide6.QtGui import QAction
    from PySide6.QtWidgets import QDialog, QTextBrowser

    from planner_gui.core.analysis.validation import ROWS

    win = make_window(restore=False)
    action = next(a for a in win.findChildren(QAction) if a.objectName() == "actionValidation")
    for _ in range(2):
        action.trigger()
    shown = [d for d in win.findChildren(QDialog, "validationDialog") if d.isVisible()]
    assert len(shown) == 1
    text = shown[0].findChild(QTextBrowser).toPlainText()
    assert all(r.figure in text and r.published_text in text for r in ROWS)
    assert "not reproduced" in text and "Daly" in text
    shown[0].close()


# -- the cheapest setup: goal seek ------------------------------------------------------------------------------


def _goal_tab(win, qtbot):
    win.tabs.setCurrentWidget(win.planning)
    win.planning.questions.setCurrentIndex(2)
    qtbot.waitUntil(lambda: win.planning.goal.scenario is not None, timeout=10_000)
    return win.planning.goal


def _set_rows(view, rows):
    while view.table.rowCount():
        view.table.removeRow(0)
    for key, values in rows:
        view._add(key, values)


def test_the_cheapest_setup_panel_finds_what_the_search_finds_and_draws_its_front(make_window, qtbot):
    from planner_gui.core.decisions.optimize import Vary, optimize

    win = _training_window(make_window, qtbot, days=10.0, gpus=16_384)
    view = _goal_tab(win, qtbot)
    assert view.table.rowCount() >= 1 and view.table.item(0, 0).text() == "gpus"  # a first search to try
    _set_rows(view, [("gpus", "8192, 16384, 32768"), ("checkpoint_interval_min", "2:30:log")])
    view.deadline.setValue(60.0)
    view.quantile.setValue(90.0)
    view.search_button.click()
    assert not view.search_button.isEnabled() and view.stop_button.isEnabled()
    qtbot.waitUntil(lambda: view.result is not None, timeout=300_000)
    want = optimize(
        win.scenario(),
        [Vary("gpus", values=(8192, 16384, 32768)), Vary("checkpoint_interval_min", lo=2.0, hi=30.0, log=True)],
        60.0,
        0.9,
    )
    got = view.result
    assert got.evaluated == want.evaluated and got.chosen.inputs == want.chosen.inputs
    assert got.chosen.cost_usd == pytest.approx(want.chosen.cost_usd, rel=1e-12)
    np.testing.assert_allclose(view.front.getData()[0], [s.days_quantile for s in want.front], rtol=1e-12)
    np.testing.assert_allclose(view.chosen.getData()[1], [want.chosen.cost_usd / 1e6], rtol=1e-12)
    assert view.line.value() == pytest.approx(60.0)
    names = [label.text for _, label in view.legend.items]
    assert names == ["setups simulated", "the front", "chosen"]
    assert all(item.isVisible() for item in (view.all, view.front, view.chosen))
    assert "Chosen:" in view.note.text() and "setups simulated" in view.note.text()
    assert view.search_button.isEnabled() and not view.stop_button.isEnabled()


def test_stop_keeps_the_best_so_far_and_a_bad_row_is_said(make_window, qtbot):
    win = _training_window(make_window, qtbot, days=10.0, gpus=16_384)
    view = _goal_tab(win, qtbot)
    _set_rows(view, [("gpus", "nope, 2")])
    view.search_button.click()
    assert view.searcher is None and "Cannot search" in view.note.text()
    _set_rows(view, [("gpus", ", ".join(str(8192 + 1024 * i) for i in range(12)))])
    view.deadline.setValue(1.0)  # no setup meets it
    view.search_button.click()
    qtbot.waitUntil(lambda: view.searcher is not None and len(view.searcher.seen) > 0, timeout=300_000)
    view.stop_button.click()
    r = view.result
    assert r.stopped and 0 < r.evaluated < 12 and not r.meets
    assert "stopped: the best so far" in view.note.text() and "No setup meets the goal" in view.note.text()
    assert not view.chosen.isVisible()  # nothing is chosen: the fastest is named, not starred
    win.inputs.update(detect_min=7.0)
    settle(qtbot, win)
    assert "before your last change" in view.note.text()


def test_without_a_training_run_the_search_says_how_to_get_one(make_window, qtbot):
    win = make_window(restore=False)
    settle(qtbot, win)
    view = _goal_tab(win, qtbot)
    assert not view.search_button.isEnabled() and "Training run" in view.note.text()


def test_the_fronts_legend_lists_chosen_only_when_a_setup_meets_the_goal_and_far_setups_do_not_squash_it(qtbot):
    from planner_gui.core.decisions.optimize import Search, Setup, pareto_front
    from planner_gui.ui.goal_view import GoalView

    view = GoalView()
    qtbot.addWidget(view)

    def search(deadline: float) -> Search:
        setups = tuple(
            Setup({"gpus": n}, d, c, d, d <= deadline)
            for n, d, c in ((16_384, 40.0, 80e6), (32_768, 22.0, 90e6), (65_536, 14.0, 110e6), (1_024, 2_000.0, 4.7e9))
        )
        chosen = min((s for s in setups if s.meets), key=lambda s: s.cost_usd, default=setups[2])
        return Search(deadline, 0.9, None, chosen, pareto_front(setups), (), setups, len(setups))

    def labels() -> list[str]:
        return [label.text for _, label in view.legend.items]

    view._draw(search(30.0))
    assert "chosen" in labels() and view.chosen.isVisible()
    (_, x1), (_, y1) = view.widget.getPlotItem().getViewBox().viewRange()
    assert x1 < 100 and y1 < 1_000  # the 2,000-day, $4.7 B setup is left out of the view, not the front squashed
    view._draw(search(5.0))  # none meets: no star, and no legend entry for it
    assert "chosen" not in labels() and not view.chosen.isVisible()
    view._draw(search(30.0))
    assert labels().count("chosen") == 1
