"""The window's recovery strategies against what their labels say: the Recovery tiers controls (each changes
exactly the field it names), the failure-scope table, the strategy comparison (computed off the window's
thread, the same numbers as ``planner-gui strategies``), and the summary and plots with two tiers."""

from __future__ import annotations

import dataclasses
import json
import math
import os

import numpy as np
import pytest
from PySide6.QtGui import QColor, QImage
from PySide6.QtWidgets import QAbstractSlider, QComboBox
from test_gui import find, settle

from planner_gui.core.analysis.results import simulate
from planner_gui.core.analysis.strategies import STRATEGIES, compare_strategies
from planner_gui.core.files.presets import load_preset
from planner_gui.core.model.scenario import OPTIMAL, Tiers
from planner_gui.core.model.tiers import scope_of
from planner_gui.core.session.plan import interval_range
from planner_gui.core.sim.tiers_run import plan_tiers
from planner_gui.core.util import fmt
from planner_gui.ui.strategies_view import COLUMNS, SCALE_TRIALS, STRATEGY_COLORS, WINDOW_GPUS, WINDOW_TRIALS

pytestmark = pytest.mark.gui


def _tier_window(make_window, qtbot, preset="h100-100k-inmemory", **changes):
    sc = load_preset(preset).replace(trials=200, **changes)
    win = make_window(sc, restore=False)
    settle(qtbot, win)
    return win


def _only(before, after, **tier_fields):
    """``after`` is ``before`` with exactly ``tier_fields`` of its tiers changed (and the name marked edited)."""
    assert after.tiers == dataclasses.replace(before.tiers, **tier_fields)
    assert after.replace(tiers=before.tiers, name=before.name) == before


@pytest.mark.parametrize(
    ("slider", "field"),
    [
        ("fastIntervalSlider", "fast_interval_min"),
        ("fastStallSlider", "fast_stall_s"),
        ("fastRestoreSlider", "fast_restore_min"),
        ("persistentUploadSlider", "persistent_upload_min"),
        ("persistentRestoreSlider", "persistent_restore_min"),
    ],
)
def test_each_tier_slider_moves_its_field_only(make_window, qtbot, slider, field):
    win = _tier_window(make_window, qtbot, preset="h100-100k-inmemory")
    if field == "fast_interval_min":  # a fixed interval: the slider is off while the interval is 'optimal'
        win.controls.tiers.fast_optimal.setChecked(False)
    before = win.scenario()
    s = find(win, QAbstractSlider, slider)
    assert s.isEnabled()
    control = win.controls.tiers.values[field]
    s.setValue(s.value() + 60)
    after = win.scenario()
    assert getattr(after.tiers, field) == pytest.approx(control.value(), rel=1e-12)
    assert getattr(after.tiers, field) != getattr(before.tiers, field)
    _only(before, after, **{field: getattr(after.tiers, field)})


def test_fast_tier_switch_turns_on_the_published_defaults_and_off_again(make_window, qtbot):
    win = make_window(load_preset("h100-100k").replace(trials=200), restore=False)
    settle(qtbot, win)
    before = win.scenario()
    assert before.tiers is None
    assert not win.controls.tiers.values["fast_stall_s"].spin.isEnabled()
    assert win.controls.use_optimal.text() == "Use the optimal interval (Daly)"
    win.controls.tiers.fast.setChecked(True)
    assert win.scenario().tiers == Tiers(fast_enabled=True)
    assert win.controls.use_optimal.text() == "Use the optimal interval (tier model)"  # not Daly's formula now
    assert win.scenario().replace(tiers=None, name=before.name) == before
    assert win.controls.tiers.values["fast_stall_s"].spin.isEnabled()
    # The Checkpointing group's write is now what each persistent point blocks for on top of the fast stall:
    # moving it changes that and only that, and the tier group's note names it.
    write = win.controls.values["checkpoint_write_s"]
    assert write.spin.isEnabled()
    assert "blocks the fast stall plus the Checkpointing write (5.0 s)" in win.controls.tiers.info.text()
    on = win.scenario()
    write.spin.setValue(12.0)  # as typed
    assert win.scenario() == on.replace(checkpoint_write_s=12.0, name=win.scenario().name)
    assert plan_tiers(win.scenario()).params.c_point == pytest.approx(12.0 / 3600.0)
    assert "Checkpointing write (12 s)" in win.controls.tiers.info.text()
    write.spin.setValue(5.0)
    win.controls.tiers.fast.setChecked(False)
    assert win.scenario().tiers == Tiers(fast_enabled=False)
    assert win.controls.values["checkpoint_write_s"].spin.isEnabled()
    assert win.controls.use_optimal.text() == "Use the optimal interval (Daly)"
    settle(qtbot, win)  # fast off, no upload, no restore: today's model, today's numbers
    ref = simulate(before)
    assert win.last_result.main.goodput.mean() == pytest.approx(float(ref.goodput.mean()), rel=1e-12)


def test_optimal_fast_interval_switch_keeps_the_interval_in_use(make_window, qtbot):
    win = _tier_window(make_window, qtbot)
    before = win.scenario()
    optimum = plan_tiers(before).fast_min
    assert win.controls.tiers.values["fast_interval_min"].value() == pytest.approx(optimum)
    win.controls.tiers.fast_optimal.setChecked(False)
    _only(before, win.scenario(), fast_interval_min=pytest.approx(optimum))
    assert win.controls.tiers.values["fast_interval_min"].spin.isEnabled()
    win.controls.tiers.fast_optimal.setChecked(True)
    assert win.scenario().tiers.fast_interval_min == OPTIMAL
    assert not win.controls.tiers.values["fast_interval_min"].spin.isEnabled()


def test_replicas_placement_and_domain_change_their_field_only(make_window, qtbot):
    win = _tier_window(make_window, qtbot)
    t = win.controls.tiers
    before = win.scenario()
    t.domain.setValue(4)
    _only(before, win.scenario(), nodes_per_domain=4)
    before = win.scenario()
    t.replicas.setValue(2)
    _only(before, win.scenario(), fast_replicas=2)
    before = win.scenario()
    t.placement.setCurrentIndex(t.placement.findData("same-domain"))
    assert t.placement.currentText() == "the same domain"
    _only(before, win.scenario(), fast_placement="same-domain")
    # Shown back: a scenario loaded with other values moves every control.
    sc = win.scenario().replace(tiers=Tiers(True, 2.0, 1.5, 0.5, 3, "other-domain", 8, 1.0, 2.0), name="loaded")
    win.inputs.load(sc)
    assert (t.replicas.value(), t.domain.value(), t.placement.currentData()) == (3, 8, "other-domain")
    assert not t.fast_optimal.isChecked()
    for field in ("fast_interval_min", "fast_stall_s", "fast_restore_min", "persistent_upload_min"):
        assert t.values[field].value() == pytest.approx(getattr(sc.tiers, field))


def test_each_scope_combo_changes_its_component_only(make_window, qtbot):
    win = _tier_window(make_window, qtbot)
    before = win.scenario()
    combo = find(win, QComboBox, "scopeCombo:Faulty GPU")
    assert combo.currentText() == "node" == scope_of(before.components[0])
    assert "Default: node." in combo.toolTip()
    combo.setCurrentText("domain")
    after = win.scenario()
    assert after.components[0].scope == "domain"
    assert after.components[1:] == before.components[1:]
    assert after.replace(components=before.components, name=before.name) == before
    combo.setCurrentText("node")  # back to its default: stored as the default (None), files stay minimal
    assert win.scenario().components == before.components
    # A scenario whose scope changes elsewhere shows it.
    comps = list(before.components)
    comps[2] = dataclasses.replace(comps[2], scope="node")
    win.inputs.load(before.replace(components=tuple(comps)))
    assert find(win, QComboBox, f"scopeCombo:{comps[2].name}").currentText() == "node"


def test_a_persistent_stall_with_nothing_restoring_from_storage_is_named_so(make_window, qtbot):
    """Replicas in another domain and a persistent stall: the model never needs a persistent checkpoint, so it is
    taken daily by policy (not a year-long interval as advice), and the summary and the tier note say why (no
    'Young's rule' for it, counts with separators)."""
    win = _tier_window(make_window, qtbot, checkpoint_write_s=5.0, gpus=16_384, days=5.0)
    plan = plan_tiers(win.scenario())
    assert plan.persistent_unneeded and plan.k > 100 and abs(plan.persistent_min - 1440.0) <= plan.fast_min
    detail = win.summary.interval.detail.text()
    assert "(daily by policy: never needed by this model)" in detail and f"every {plan.k:,} snapshots" in detail
    assert "Young's rule" not in detail and "days" not in detail
    assert "daily by policy (never needed by this model's failures)" in win.controls.tiers.info.text()
    # The interval plot's sweep keeps the persistent interval's minutes: its label names them.
    label = win.plots.plot("goodputVsIntervalPlot").getAxis("bottom").labelText
    assert label == f"fast interval (persistent {fmt.duration_min(plan.persistent_min)})"


def test_tier_info_names_the_intervals_and_the_share_restoring_from_memory(make_window, qtbot):
    win = _tier_window(make_window, qtbot)
    text = win.controls.tiers.info.text()
    assert "fast 46 s" in text and "persistent every fast snapshot (46 s)" in text
    assert "18 of 18 causes (100 % of failures) can restore from memory" in text
    win.controls.tiers.placement.setCurrentIndex(win.controls.tiers.placement.findData("same-domain"))
    p = plan_tiers(win.scenario()).params
    share = 100 * p.lam_fast / (p.lam_fast + p.lam_persistent)
    assert f"17 of 18 causes ({share:.0f} % of failures)" in win.controls.tiers.info.text()


def test_the_tier_controls_say_when_a_restore_from_memory_is_slower_than_from_storage(make_window, qtbot):
    win = _tier_window(make_window, qtbot)
    assert "Note:" not in win.controls.tiers.info.text()
    sc = win.scenario()
    win.inputs.load(sc.replace(tiers=dataclasses.replace(sc.tiers, fast_restore_min=3.0)))  # over 2.15 from storage
    assert "Note: A restore from memory (3 min) takes longer than one from storage (2.15 min)" in (
        win.controls.tiers.info.text()
    )


def test_the_strategy_comparison_is_the_command_lines_and_draws_what_it_names(make_window, qtbot):
    win = _tier_window(make_window, qtbot)
    dlg = win.show_strategies()
    with qtbot.waitSignal(dlg.computed, timeout=120_000):
        pass
    sc = win.scenario().replace(trials=min(win.scenario().trials, WINDOW_TRIALS))
    ref = json.loads(json.dumps(compare_strategies(sc, WINDOW_GPUS, scale_trials=SCALE_TRIALS)))
    assert dlg.comparison == ref  # 'planner-gui strategies --json', run by the dialog: the same numbers
    for i, row in enumerate(ref["at_scale"]):
        assert dlg.table.verticalHeaderItem(i).text() == f"{i + 1}. {STRATEGIES[i]}"
        assert dlg.table.item(i, 0).text().startswith(f"{100 * row['goodput']:.2f} %")
        exact = row["goodput_expected"]
        assert dlg.table.item(i, 1).text() == ("none" if exact is None else f"{100 * exact:.2f} %")
        assert dlg.table.item(i, COLUMNS.index("From memory")).text() == f"{row['restores']['fast']:,.1f}"
        reduced = f"{100 * row['hours']['reduced_throughput'] / sc.hours:.2f} %"
        assert dlg.table.item(i, 7).text() == reduced and dlg.table.horizontalHeaderItem(7).text() == "Reduced"
        waiting = f"{100 * row['hours'].get('waiting_for_spares', 0.0) / sc.hours:.2f} %"
        assert dlg.table.item(i, 6).text() == waiting and dlg.table.horizontalHeaderItem(6).text() == "Waiting"
    assert dlg.table.isColumnHidden(COLUMNS.index("Slow nodes"))  # no slow nodes here: no column of zeros
    # Every legend entry is drawn: each stacked bar has width, each curve is finite inside the view.
    for sample, label in dlg.time_legend.items:
        assert np.asarray(sample.item.opts["width"]).sum() > 0, label.text
    (x0, x1), (y0, y1) = dlg.plot_gpus.getViewBox().viewRange()
    for sample, label in dlg.gpus_legend.items:
        x, y = sample.item.getData()
        assert np.isfinite(y).all() and ((x >= x0) & (x <= x1) & (y >= y0) & (y <= y1)).any(), label.text
    # The stacked bars add up to the whole window.
    total = sum(np.asarray(b.opts["width"]) for b in dlg.time_bars.values())
    np.testing.assert_allclose(total, 100.0, rtol=1e-9)
    # It follows the scenario: a change starts a new comparison in a process of its own.
    win.inputs.update(gpus=16_384)
    assert "the numbers below are for the inputs before" in dlg.status.text() and not dlg.table.isEnabled()
    with qtbot.waitSignal(dlg.computed, timeout=120_000):
        pass
    assert dlg.comparison["gpus"] == 16_384 and dlg.table.isEnabled()
    trials = min(win.scenario().trials, WINDOW_TRIALS)
    assert f"'planner-gui strategies --trials {trials}' computes them" in dlg.status.text()  # what the command runs
    assert math.isclose(dlg.here.value(), math.log10(16_384))
    dlg.close()


def test_strategies_that_coincide_are_both_in_sight(make_window, qtbot):
    """Without upload time strategies 1 and 2 are one (the note says so): the plot still shows both colours,
    the later curve's smaller marker and dashed line over the earlier one's."""
    win = _tier_window(make_window, qtbot, preset="h100-100k")
    dlg = win.show_strategies()
    assert not dlg.plots.isVisible()  # no empty axes and legend of nothing while the first comparison runs
    with qtbot.waitSignal(dlg.computed, timeout=120_000):
        pass
    assert dlg.plots.isVisible()
    x, _ = dlg.curves[STRATEGIES[0]].getData()
    assert list(np.round(10**x)) == [1024, 4096, 16_384, 65_536, 100_000, 262_144, 1_048_576]  # the command line's
    rows = dlg.comparison["at_scale"]
    assert rows[0]["hours"] == rows[1]["hours"] and "rows 1 and 2 are the same" in dlg.status.text()
    np.testing.assert_array_equal(dlg.curves[STRATEGIES[0]].getData()[1], dlg.curves[STRATEGIES[1]].getData()[1])
    dlg.gpus_legend.setVisible(False)  # its samples show every colour: only the curves count here
    area = dlg.plots.mapFromScene(dlg.plot_gpus.sceneBoundingRect()).boundingRect()  # this plot alone
    image = dlg.plots.grab(area).toImage().convertToFormat(QImage.Format.Format_RGB32)
    dlg.gpus_legend.setVisible(True)
    width, height = image.width(), image.height()
    pixels = np.frombuffer(image.constBits(), np.uint8, count=image.bytesPerLine() * height)
    rgb = pixels.reshape(height, image.bytesPerLine() // 4, 4)[:, :width, 2::-1].astype(int)  # BGRA -> RGB
    for name, color in zip(STRATEGIES[:2], STRATEGY_COLORS[:2], strict=True):
        c = QColor(color)
        near = (np.abs(rgb - np.array([c.red(), c.green(), c.blue()])).sum(axis=2) < 30).sum()
        assert near > 50, f"{name}: {near} pixels of its colour"
    dlg.close()


def test_a_strategy_that_cannot_be_built_is_one_row_not_the_whole_comparison(make_window, qtbot):
    win = _tier_window(make_window, qtbot)
    win.controls.tiers.replicas.setValue(2)  # in another domain: fine; the same-domain strategy cannot hold them
    settle(qtbot, win)
    dlg = win.show_strategies()
    with qtbot.waitSignal(dlg.computed, timeout=120_000):
        pass
    assert (
        dlg.table.item(2, 0).text() == "cannot be built here" and "room for 1 replica" in dlg.table.item(2, 0).toolTip()
    )
    for i in (0, 1, 3, 4):
        assert dlg.table.item(i, 0).text().endswith(tuple("0123456789"))  # "xx.xx % +- y.yy"
    assert "Strategy 3 cannot be built here" in dlg.status.text()
    labels = [label.text for _, label in dlg.gpus_legend.items]
    assert labels == [n for n in STRATEGIES if n != "+ fast tier, same-domain"]  # the legend names what is drawn
    x, _ = dlg.curves["+ fast tier, same-domain"].getData()
    assert x is None or len(x) == 0
    assert float(np.asarray(dlg.time_bars["useful"].opts["width"])[2]) == 0.0
    dlg.close()


def test_the_strategy_comparison_says_why_it_cannot_compute(make_window, qtbot):
    win = _tier_window(make_window, qtbot)
    dlg = win.show_strategies()
    with qtbot.waitSignal(dlg.computed, timeout=120_000):
        pass
    assert dlg.gpus_legend.isVisible() and dlg.time_legend.isVisible()
    from planner_gui.core.model.spares import Spares

    # What means nothing (continuing on a job of one replica) is still refused (every feature combines).
    win.inputs.update(spares=Spares(recovery_mode="continue", replica_gpus=win.scenario().gpus))
    qtbot.waitUntil(lambda: "Cannot compare strategies" in dlg.status.text(), timeout=10_000)
    assert "spares.recovery_mode" in dlg.status.text() and "two replicas" in dlg.status.text()
    # Nothing of the other inputs stays drawn, nor the legends naming it.
    assert dlg.comparison is None and dlg.table.item(0, 0) is None
    assert not dlg.gpus_legend.isVisible() and not dlg.time_legend.isVisible()
    assert all(len(c.getData()[0] if c.getData()[0] is not None else []) == 0 for c in dlg.curves.values())
    assert all(len(b.opts["width"]) == 0 for b in dlg.time_bars.values())
    dlg.close()


def test_summary_and_interval_plot_follow_the_fast_tier(make_window, qtbot):
    win = _tier_window(make_window, qtbot)
    m = win.last_result.main
    ref = simulate(win.scenario())  # what 'planner-gui run --json' reports for the same scenario
    assert m.goodput.mean() == float(ref.goodput.mean())
    assert m.restores() == ref.restores()
    tp = m.tier_plan
    young, daly = tp.fast_young_daly()
    s = win.summary.interval
    assert s.value.text() == f"fast {fmt.duration_min(tp.fast_min)} (optimal)" == "fast 46 s (optimal)"
    detail = s.detail.text()
    assert f"persistent {fmt.duration_min(tp.persistent_min)} (optimal): each snapshot" in detail
    assert f"Young {fmt.duration_min(young)}, Daly {fmt.duration_min(daly)}" in detail
    r = ref.restores()
    assert f"restores: memory {fmt.count(r['fast'], 1)}, storage {fmt.count(r['persistent'], 1)}" in detail
    # The interval plot is about the fast interval (the one its sweep varies): axis, markers and label.
    p = win.plots.plot("goodputVsIntervalPlot")
    assert p.getAxis("bottom").labelText == "fast interval (= persistent)"
    (x0, x1), _ = p.getViewBox().viewRange()
    for key, minutes in (("current", tp.fast_min), ("Young", young), ("Daly", daly)):
        line = win.plots.iv_lines[key]
        assert line.line.value() == pytest.approx(math.log10(minutes))
        assert x0 < line.line.value() < x1
    lo, hi = interval_range(win.scenario())
    assert lo <= tp.fast_min / 30 and hi >= tp.fast_min * 30 and hi < 60 * 24  # not today's hours-long optimum
    assert win.last_result.by_interval.x.min() >= lo and win.last_result.by_interval.x.max() <= hi


def _hist_labels(win):
    return [label.text for _, label in win.plots.legends["goodputHistogramPlot"].items]


def test_histogram_lists_the_exact_line_only_when_there_is_one(make_window, qtbot):
    win = _tier_window(make_window, qtbot)
    assert "exact expectation" in _hist_labels(win)
    x, _ = win.plots.hist_exact.getData()
    assert x[0] == pytest.approx(100 * win.last_result.main.expected.goodput)
    t = win.controls.tiers
    t.placement.setCurrentIndex(t.placement.findData("same-domain"))  # both tiers restore: no closed form
    settle(qtbot, win)
    assert win.last_result.main.expected.goodput is None
    assert "exact expectation" not in _hist_labels(win)
    assert "exact none (two tiers restore: Monte Carlo only)" in win.summary.goodput.detail.text()
    assert "best: no closed form; the fast optimum is the fast tier's formula's" in win.summary.interval.detail.text()
    x = float(np.log10(win.last_result.by_interval.x[3]))
    assert win.plots._describe_interval(x, 50.0).endswith(": none (no closed form)")
    t.placement.setCurrentIndex(t.placement.findData("other-domain"))
    settle(qtbot, win)
    assert _hist_labels(win).count("exact expectation") == 1


def test_closing_the_strategy_comparison_stops_its_process(make_window, qtbot):
    """The comparison is computed in a compute process of the dialog's own (it ran the command line in a process
    of its own, through a scenario file in a folder of its own); closing the dialog stops it."""
    win = _tier_window(make_window, qtbot)
    dlg = win.show_strategies()
    jobs = dlg._jobs
    qtbot.waitUntil(lambda: jobs._controller._process is not None, timeout=30_000)
    assert jobs._controller._process.pid != os.getpid() and jobs.busy
    dlg.close()
    qtbot.waitUntil(lambda: not jobs.alive, timeout=10_000)


def test_a_comparison_whose_process_is_killed_from_outside_is_computed_again(make_window, qtbot):
    """Killed (as the system's out-of-memory killer or a user's `kill -9` would), its process said only that it
    had stopped; now it is replaced, as the window's own is, and the comparison still comes; the reason shown is
    never the estimate."""
    win = _tier_window(make_window, qtbot)
    dlg = win.show_strategies()
    qtbot.waitUntil(lambda: dlg._jobs._controller._process is not None, timeout=30_000)
    proc = dlg._jobs._controller._process
    proc.kill()
    with qtbot.waitSignal(dlg.computed, timeout=120_000):
        pass
    assert dlg.comparison is not None and dlg._jobs._controller._process is not proc
    assert "Cannot" not in dlg.status.text() and "estimate" not in dlg.status.text()
    dlg.close()


def test_a_strategy_that_cannot_be_is_named_not_raised(make_window, qtbot):
    win = _tier_window(make_window, qtbot)
    t = win.controls.tiers
    t.placement.setCurrentIndex(t.placement.findData("same-domain"))
    t.replicas.setValue(2)  # two replicas in the one other node of a 2-node domain
    assert t.info.text().startswith("Cannot plan: same-domain placement: a domain of 2 nodes has room for 1 replica")
    # The window names the input as its label says, not by the scenario file's field.
    assert "Replicas: same-domain" in win.status.text() and "fast_replicas" not in win.status.text()
    assert "asked for 2 replicas" in win.status.text()
    assert win.banner.isVisible() or not win.results_current()
    # The comparison still runs: only the strategy that places them in the same domain cannot be built.
    dlg = win.show_strategies()
    with qtbot.waitSignal(dlg.computed, timeout=120_000):
        pass
    assert [row["error"] is None for row in dlg.comparison["at_scale"]] == [True, True, False, True, True]
    assert "Strategy 3 cannot be built here: Replicas: same-domain placement" in dlg.status.text()
    dlg.close()
    # With the fast tier off its replicas are not used: the run computes, no error (it raised in the window).
    t.fast.setChecked(False)
    settle(qtbot, win)
    assert win.results_current() and not win.banner.isVisible()
    assert win.last_result.main.scenario.tiers.fast_replicas == 2 and win.last_result.main.tier_plan.fast_min is None
    t.fast.setChecked(True)
    t.replicas.setValue(1)
    settle(qtbot, win)
    assert t.info.text().startswith("In use:")


def test_one_default_for_nodes_per_domain_shown_wherever_it_applies(make_window, qtbot):
    """The pool's model and the tiers share the default the window shows (the pool took 4 while the box showed 2:
    setting the box to what it showed moved the nodes in repair); the box is live with a finite pool even while
    the fast tier is off, and greyed only where nothing uses it."""
    from planner_gui.core.model.spares import Spares, nodes_per_domain_of, spares_params

    win = make_window(load_preset("h100-100k"))
    t = win.controls.tiers
    assert win.scenario().tiers is None or not win.scenario().tiers.fast_enabled
    assert not t.domain.isEnabled()
    win.inputs.load(win.scenario().replace(spares=Spares(spare_nodes=89), name="pool"))
    settle(qtbot, win)
    sc = win.scenario()
    assert t.domain.isEnabled() and nodes_per_domain_of(sc) == t.domain.value()
    before = spares_params(sc, sc.spares, 30.0).mean_nodes_in_repair
    t.domain.setValue(t.domain.value())  # the value shown, now set: nothing moves
    t.domain.setValue(t.domain.value() + 1)
    t.domain.setValue(t.domain.value() - 1)
    after = win.scenario()
    assert nodes_per_domain_of(after) == nodes_per_domain_of(sc)
    assert spares_params(after, after.spares, 30.0).mean_nodes_in_repair == pytest.approx(before, rel=1e-12)


def test_strategies_with_a_pool_show_the_time_waiting_for_spares_and_say_they_keep_the_pool(make_window, qtbot):
    """Every strategy keeps the scenario's spare pool: a short pool makes rows 1-4 wait for spares, and that time is
    a column and a bar of its own, so each row's bars still add up to the whole window (they reached 68 % on
    h100-100k-plan), and the note says what is kept (it said 'no spare pool, no swap')."""
    from planner_gui.core.model.spares import Spares

    sc = load_preset("llama3-405b").replace(days=5.0, trials=20, spares=Spares(spare_nodes=4, swap_min=10.0))
    win = make_window(sc, restore=False)
    settle(qtbot, win)
    dlg = win.show_strategies()
    qtbot.waitUntil(lambda: dlg.ready, timeout=10_000)
    dlg._jobs.cancel()
    ref = json.loads(json.dumps(compare_strategies(sc, (1024, 4096), scale_trials=10)))
    dlg.comparison = ref
    dlg._draw(ref, sc)
    rows = ref["at_scale"]
    assert rows[0]["hours"]["waiting_for_spares"] > 0.01 * sc.hours
    total = sum(np.asarray(b.opts["width"]) for b in dlg.time_bars.values())
    np.testing.assert_allclose(total, 100.0, rtol=1e-9)
    assert dlg.table.horizontalHeaderItem(6).text() == "Waiting"
    assert dlg.table.item(0, 6).text() == f"{100 * rows[0]['hours']['waiting_for_spares'] / sc.hours:.2f} %"
    labels = [label.text for _, label in dlg.time_legend.items]
    assert "waiting for spares" in labels
    for sample, label in dlg.time_legend.items:  # every entry drawn
        assert np.asarray(sample.item.opts["width"]).sum() > 0, label.text
    assert "4 spare nodes, swap 10 min" in dlg.status.text() and "no spare pool" not in dlg.status.text()
    assert not any(dlg.table.item(i, j).text().startswith("-0.00") for i in range(len(rows)) for j in range(2, 8))
    dlg.close()
