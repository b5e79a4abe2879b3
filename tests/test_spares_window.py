"""Spares in the main window against what the labels say: each control of the Spares and repairs group
changes exactly its field, the summary and the time breakdown show the hours spares add, and the Repairs and
Recovery Modes dialog draws what its legends promise."""

from __future__ import annotations

import dataclasses
import re

import numpy as np
import pytest
from PySide6.QtWidgets import QAbstractSlider
from test_gui import find, settle

from planner_gui.core.analysis.modes import mode_counts, mode_scenario, restart_vs_continue
from planner_gui.core.analysis.results import HOURS_KEYS, SPARES_HOURS_KEYS
from planner_gui.core.files.presets import load_preset
from planner_gui.core.model.scenario import Scenario
from planner_gui.core.model.spares import Spares
from planner_gui.core.util import fmt
from planner_gui.ui.plots import hours_label
from planner_gui.ui.spares_modes import MODES_TITLE

#: The time breakdown's rows with spares (no slow nodes here): today's five and the two a pool adds.
SPARES_ROWS = (*HOURS_KEYS, *SPARES_HOURS_KEYS)

pytestmark = pytest.mark.gui


def _window(make_window, qtbot, spares=None, **changes):
    sc = load_preset("llama3-405b").replace(trials=60, spares=spares, **changes)
    win = make_window(sc, restore=False)
    settle(qtbot, win)
    return win


def _only_spares_changed(before, after, field):
    assert dataclasses.replace(after, spares=before.spares, name=before.name) == before
    old, new = before.spares or Spares(), after.spares
    assert new is not None
    assert dataclasses.replace(new, **{field: getattr(old, field)}) == old
    assert getattr(new, field) != getattr(old, field)


@pytest.mark.parametrize(
    ("slider", "field", "spares"),
    [
        ("spareNodesSlider", "spare_nodes", Spares(spare_nodes=8)),
        ("swapSlider", "swap_min", None),
        ("replicaGpusSlider", "replica_gpus", Spares(recovery_mode="continue")),
        ("continueStallSlider", "continue_stall_min", Spares(recovery_mode="continue")),
        ("shrinkToSlider", "min_gpus", Spares(spare_nodes=8, min_gpus=8000)),
        ("repairSigmaSlider", "repair_sigma", Spares(spare_nodes=8, repair_sigma=0.5)),
        ("repairSlider:GPU", "repair_hours", Spares(spare_nodes=8)),
        ("spareNodePriceSlider", "node_price_usd", Spares(spare_nodes=8, node_price_usd=300_000.0)),
        ("depreciationSlider", "depreciation_years", Spares(spare_nodes=8, node_price_usd=300_000.0)),
        ("spareNodeRentSlider", "rental_usd_per_node_hour", Spares(spare_nodes=8, rental_usd_per_node_hour=20.0)),
    ],
)
def test_each_spares_slider_moves_its_field_only(make_window, qtbot, slider, field, spares):
    win = _window(make_window, qtbot, spares)
    before = win.scenario()
    s = find(win, QAbstractSlider, slider)
    control = next(c for c in win.controls.spares.controls if c.slider is s)
    s.setValue(s.value() + 150)
    after = win.scenario()
    _only_spares_changed(before, after, field)
    sp = after.spares
    assert sp is not None
    shown = control.value()
    if field == "repair_hours":
        assert dict(sp.repair_hours) == {"GPU": pytest.approx(shown, rel=1e-12)}
    elif field == "replica_gpus":
        assert sp.replica_gpus % 8 == 0 and abs(sp.replica_gpus - shown) <= 4
    else:
        assert getattr(sp, field) == pytest.approx(
            shown, rel=1e-9, abs=0.5 if field in ("spare_nodes", "min_gpus") else 0
        )


def test_switches_and_mode_change_their_field_only(make_window, qtbot):
    win = _window(make_window, qtbot)
    box = win.controls.spares
    assert not box.pool.slider.isEnabled() and not box.replica.slider.isEnabled()
    before = win.scenario()
    box.finite.setChecked(True)
    _only_spares_changed(before, win.scenario(), "spare_nodes")
    assert win.scenario().spares.spare_nodes == round(0.01 * 16_384 / 8)
    assert box.pool.slider.isEnabled()
    before = win.scenario()
    box.mode.setCurrentText("continue")
    _only_spares_changed(before, win.scenario(), "recovery_mode")
    assert box.replica.slider.isEnabled() and box.stall.spin.isEnabled() and box.lost.isEnabled()
    before = win.scenario()
    box.lost.setValue(3)
    _only_spares_changed(before, win.scenario(), "max_replicas_lost")
    # Shrinking applies in restart mode only: in continue mode its controls are off.
    assert not box.shrink.isEnabled() and not box.min_gpus.slider.isEnabled()
    box.mode.setCurrentText("restart")
    assert box.shrink.isEnabled()
    before = win.scenario()
    box.shrink.setChecked(True)
    _only_spares_changed(before, win.scenario(), "min_gpus")
    assert box.min_gpus.slider.isEnabled()
    box.mode.setCurrentText("continue")
    assert not box.shrink.isEnabled() and not box.min_gpus.slider.isEnabled()
    # (shrinking means nothing in continue mode: the one table refuses it, so leaving restart mode ends it,
    # and the switch shows so)
    assert win.scenario().spares.min_gpus is None and not box.shrink.isChecked()
    box.finite.setChecked(False)
    assert win.scenario().spares.spare_nodes is None


def test_the_summary_and_breakdown_show_the_hours_spares_add(make_window, qtbot):
    win = _window(make_window, qtbot, Spares(spare_nodes=2, swap_min=10.0))
    res = win.last_result
    assert res is not None and res.main.spares_run is not None
    hours = res.main.hours_per_trial()
    assert "waiting for spares" in win.summary.goodput.detail.text()
    # No closed form with spares, and the summary says so for this reason (not the tiers' one).
    assert "exact none (spares and repairs: Monte Carlo only)" in win.summary.goodput.detail.text()
    assert "tiers" not in win.summary.goodput.detail.text()
    assert "no closed form with spares" in win.summary.interval.detail.text()  # not "at the best interval"
    assert "spare pool" in win.summary.lost.detail.text()
    cost = win.summary.lost.detail.text()  # "$2.31 M" must not wrap before its "M" in the narrow box
    assert re.search(r"\$[\d.,]+\u00a0[kMB]\b", cost) and not re.search(r"\$[\d.,]+ [kMB]\b", cost), cost
    ticks = [t for _, t in win.plots.plot("timeBreakdownPlot").getAxis("left")._tickLevels[0]]
    labels = [hours_label(k, win.scenario()) for k in SPARES_ROWS]
    assert win.plots._breakdown_labels == labels
    # each row shows its label, or as much of it as the plot's width leaves room for (the hover names it in full)
    assert all(t == full or (t.endswith("\u2026") and full.startswith(t[:-1])) for t, full in zip(ticks, labels))
    assert labels[SPARES_ROWS.index("recovery")] == "detection + restart + swap"  # what the hours hold
    row = SPARES_ROWS.index("recovery")
    assert win.plots._describe_breakdown(1.0, float(row)).startswith("detection + restart + swap: ")
    y, widths = win.plots.curve_data("timeBreakdownPlot")
    assert len(y) == len(SPARES_ROWS)
    for i, k in enumerate(SPARES_ROWS):
        assert widths[i] == pytest.approx(float(hours[k].mean()) if k in hours else 0.0)
    assert widths[SPARES_ROWS.index("waiting_for_spares")] > 0
    assert win.plots._breakdown_shown == SPARES_ROWS  # (no slow nodes' row without slow nodes)
    # Back to unlimited spares: today's five rows.
    win.controls.spares.finite.setChecked(False)
    win.controls.spares.swap.spin.setValue(0)
    settle(qtbot, win)
    assert win.last_result.main.spares_run is None
    ticks = [t for _, t in win.plots.plot("timeBreakdownPlot").getAxis("left")._tickLevels[0]]
    assert len(ticks) == 5
    assert "waiting" not in win.summary.goodput.detail.text()


def test_the_modes_dialog_draws_every_legend_entry(make_window, qtbot):
    win = _window(make_window, qtbot, Spares(spare_nodes=4, swap_min=10.0, replica_gpus=1024), gpus=8192)
    dlg = win.show_spares_modes()
    qtbot.waitUntil(lambda: dlg.ready, timeout=60_000)
    titles: list[str] = []
    real = dlg.mode_plot.setTitle
    dlg.mode_plot.setTitle = lambda text: (titles.append(text), real(text))  # (what its title said, in turn)
    qtbot.waitUntil(lambda: dlg.comparison is not None, timeout=240_000)
    # While restart and continue computed, the plot's title said how far they had got; then its own title.
    assert any(t.startswith(f"{MODES_TITLE} (computing, ") and t.endswith("% done)") for t in titles), titles
    assert titles[-1] == MODES_TITLE
    for plot in (dlg.repair_plot, dlg.mode_plot):
        for item, _label in plot.legend.items:
            x, y = item.getData() if hasattr(item, "getData") else item.item.getData()
            assert x is not None and len(x) > 0 and np.all(np.isfinite(y))
    run = win.last_result.main.spares_run
    over = run.trials.repair_over_time
    x, y = dlg.curves["mean"].getData()
    np.testing.assert_allclose(y, over.mean(axis=0))
    np.testing.assert_allclose(x, run.trials.repair_grid / 24.0)
    assert np.all(dlg.comparison["continue"] >= dlg.comparison["restart"] - 4 * dlg.comparison["continue_sem"] - 0.01)
    # Nodes in repair from 0, up past the highest line (the legend sits below the lines, over none of them)
    _, (y0, y1) = dlg.repair_plot.getViewBox().viewRange()
    assert y0 == pytest.approx(0.0, abs=1e-9) and y1 >= float(np.max(dlg.curves["p95"].getData()[1]))
    # GPU counts on a count axis: log10 positions, labelled as counts (a label per decade at most)
    x, _ = dlg.curves["restart"].getData()
    np.testing.assert_allclose(x, np.log10(dlg.counts.astype(float)))
    axis = dlg.mode_plot.getAxis("bottom")
    (_, majors), _ = axis.tickValues(float(x.min()), float(x.max()), 600)
    assert axis.tickStrings(majors, 1.0, 1.0) == [fmt.compact(10.0**v).replace(" ", "") for v in majors]
    assert len(majors) >= 3  # a range of about a decade: 2x and 5x counts are labelled too (only 10k and 100k were)
    dlg.close()


def test_mode_scenarios_keep_the_pools_service_and_fit_the_replica():
    """At each count the pool is the smallest in which as many node-losing failures find a spare as in the
    scenario's pool (a pool scaled by its share of nodes made the restart curve wobble), and the counts run from
    two replicas to four times the scenario's GPUs."""
    from planner_gui.core.model.spares import spares_params
    from planner_gui.core.theory.spares import p_no_spare

    sc = load_preset("llama3-405b").replace(gpus=100_000, spares=Spares(spare_nodes=89, replica_gpus=2048))
    counts = mode_counts(sc)
    assert np.all(counts % 2048 == 0) and counts[0] == 4096 and counts[-1] >= 4 * 100_000 - 2048
    served = 1.0 - p_no_spare(spares_params(sc, sc.spares, 60.0), 89)
    for n in (8192, 13_312, 20_480, 400_384):
        m = mode_scenario(sc, n, "restart")
        law = spares_params(m, m.spares, 60.0)
        pool = m.spares.spare_nodes
        assert 1.0 - p_no_spare(law, pool) >= served - 1e-12, n
        assert pool == 0 or 1.0 - p_no_spare(law, pool - 1) < served, n  # the smallest that serves as well
    small = mode_scenario(sc, 1024, "continue")
    assert small.spares.replica_gpus == 1024 and small.spares.recovery_mode == "continue"


def test_planning_and_the_report_rank_spares_by_paired_monte_carlo(make_window, qtbot, tmp_path):
    """No closed form ranks the levers with a spare pool: the Planning tab shows the full run's paired Monte
    Carlo (each lever with its standard error, the pool's levers among them) and says so, and Export Report
    writes the same levers with the pool's figures (it refused spares in a dialog)."""
    win = _window(make_window, qtbot, Spares(spare_nodes=2, swap_min=10.0))
    win.tabs.setCurrentWidget(win.planning)
    settle(qtbot, win)
    panel = win.planning
    assert panel.effects and panel.effects == win.last_result.effects
    assert panel.sensitivity_note.isVisibleTo(panel) and "paired Monte Carlo" in panel.sensitivity_note.text()
    assert all(e.goodput_delta_se is not None for e in panel.effects)
    assert any("swap" in e.lever for e in panel.effects)  # a lever of the pool
    assert len(panel.bars.opts["width"]) == len(panel.effects)
    path = win.export_report_to(tmp_path / "report.html")
    assert path is not None and path.exists()
    html = path.read_text(encoding="utf-8")
    assert "No spare at a failure" in html or "no spare" in html.lower()
    assert panel.effects[0].change in html


def test_exported_results_hold_every_hour_of_the_window(make_window, qtbot, tmp_path):
    """The per-trial CSV has the hours spares add (waiting for spares), so each row's hours make the window."""
    import csv

    win = _window(make_window, qtbot, Spares(spare_nodes=2, swap_min=10.0))
    path = win.export_results_to(tmp_path / "results.csv")[0]
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    hours = [k for k in rows[0] if k.startswith("hours_")]
    assert "hours_waiting_for_spares" in hours
    window = win.scenario().hours
    for row in rows:
        assert sum(float(row[k]) for k in hours) == pytest.approx(window, rel=1e-9)


def test_a_spare_pool_with_recovery_tiers_runs_in_the_window(make_window, qtbot):
    """Turning on a spare pool with recovery tiers runs both at once (it was refused, and the banner said the
    plots were of other inputs)."""
    sc = load_preset("h100-100k-inmemory").replace(trials=60)
    win = make_window(sc, restore=False)
    settle(qtbot, win)
    win.controls.spares.finite.setChecked(True)
    settle(qtbot, win)
    assert not win.banner.isVisible() and win.results_current()
    main = win.last_result.main
    assert main.scenario.spares is not None and main.scenario.spares.spare_nodes is not None
    assert main.spares_run is not None and main.tier_plan is not None and main.engine == "general"
    assert "waiting_for_spares" in main.hours_keys


def test_lognormal_repairs_switch_and_a_sigma_of_zero_mean_fixed_repairs(make_window, qtbot):
    """The switch chooses the repair law (its field only); a sigma of 0 is a lognormal of sigma 0, repairs that
    last their mean, as --repair-sigma 0 is on the command line (it used to mean exponential here)."""
    win = _window(make_window, qtbot, Spares(spare_nodes=8))
    box = win.controls.spares
    assert not box.lognormal.isChecked() and not box.sigma.slider.isEnabled()
    before = win.scenario()
    box.lognormal.setChecked(True)
    _only_spares_changed(before, win.scenario(), "repair_sigma")
    assert win.scenario().spares.repair_sigma == 1.0 and box.sigma.slider.isEnabled()
    box.sigma.spin.setValue(0.0)
    assert win.scenario().spares.repair_sigma == 0.0 and box.lognormal.isChecked()
    before = win.scenario()
    box.lognormal.setChecked(False)
    _only_spares_changed(before, win.scenario(), "repair_sigma")
    assert win.scenario().spares.repair_sigma is None and not box.sigma.slider.isEnabled()


def test_the_goodput_vs_gpus_readout_with_spares_names_the_pool_and_no_closed_form(make_window, qtbot):
    """With spares the GPU sweep has no exact expectation, and a finite pool keeps its share of the job's nodes at
    each size (docs/spares.md): the readout says both, with the pool at the size pointed at (it read 'exact nan%',
    then '4 spare nodes at every size', which the sweep does not do)."""
    win = _window(make_window, qtbot, Spares(spare_nodes=4, swap_min=10.0))
    text = win.plots.hovers["goodputVsGpusPlot"].show_at(4.5, 50.0)
    assert "no closed form" in text and "nan" not in text
    sweep = win.plots.result.by_gpus
    n = int(sweep.x[int(np.argmin(abs(np.log10(sweep.x) - 4.5)))])
    here = round(4 * -(-n // 8) / (16_384 // 8))  # the pool's share of the nodes: 4 of 2,048 nodes
    assert f"{here:,} spare node{'s' if here != 1 else ''} here" in text and "4 nodes at the 16,384 GPUs set" in text


def test_repairs_and_modes_says_why_it_cannot_show_inputs_the_model_refuses(qtbot):
    """A shrink floor above the job (typed in, not yet corrected) is refused by the spares model: the dialog
    says so in its note instead of failing with an exception."""
    from planner_gui.core.model.scenario import Scenario
    from planner_gui.ui.spares_modes import SparesModesDialog

    sc = Scenario(gpus=16_384, trials=20).replace(spares=Spares(spare_nodes=4, min_gpus=999_999))
    dlg = SparesModesDialog(sc, None)
    qtbot.addWidget(dlg)
    qtbot.waitUntil(lambda: dlg.ready)
    assert "Cannot show the nodes in repair: spares.min_gpus" in dlg.note.text()
    dlg.close()


def test_a_scenario_with_spares_and_tiers_saves_and_opens_as_it_was(make_window, qtbot, tmp_path):
    """Spares with the fast tier save to a file that opens to the same scenario (saving was refused)."""
    from planner_gui.core.files.scenario_io import load

    win = make_window(load_preset("h100-100k-inmemory").replace(trials=60), restore=False)
    settle(qtbot, win)
    win.controls.spares.finite.setChecked(True)
    path = tmp_path / "combo.json"
    assert win._save_to(path) is True
    back = load(path)
    assert back.spares == win.scenario().spares and back.tiers == win.scenario().tiers
    assert back.replace(name=win.scenario().name) == win.scenario()


def test_every_plot_fits_its_column_with_the_long_breakdown_labels_of_continue_mode(make_window, qtbot):
    """Continue mode's breakdown row "detection + restart + swap + stalls" made its plot wider than its column in
    the three-across layout at 1440 x 860, and the column ran past the window's edge with every plot in it."""
    win = _window(make_window, qtbot, Spares(spare_nodes=89, swap_min=10.0, recovery_mode="continue"), gpus=100_000)
    win.resize(1440, 860)
    settle(qtbot, win)
    win.inputs.update(trials=61)  # a result at this size
    settle(qtbot, win)
    for name, widget in win.plots.widgets.items():
        plot = win.plots.plot(name)
        assert plot.geometry().width() <= widget.width() + 0.5, name
        right = widget.mapTo(win, widget.rect().topRight()).x()
        assert right <= win.width(), name
    axis = win.plots.plot("timeBreakdownPlot").getAxis("left")
    assert axis.width() <= 0.48 * win.plots.widgets["timeBreakdownPlot"].width() + 1


def test_the_group_says_which_model_is_on_and_the_pool_off_turns_off_what_only_it_needs(make_window, qtbot):
    """A swap time kept with the pool off leaves the spares model on: the group says so (it said only "unlimited
    spares"); repair times, which only a finite pool uses, are greyed with it off, live with it on."""
    win = _window(make_window, qtbot, Spares(spare_nodes=89, swap_min=10.0))
    box = win.controls.spares
    assert box.note.text().startswith("Model on: 89 spares") and "a 10 min swap" in box.note.text()
    assert box.repair and all(c.spin.isEnabled() for c in box.repair.values()) and box.lognormal.isEnabled()
    box.finite.setChecked(False)
    settle(qtbot, win)
    sc = win.scenario()
    assert sc.spares.spare_nodes is None and sc.spares.swap_min == 10.0 and sc.uses_spares
    text = box.note.text()
    assert text.startswith("Model on: unlimited spares") and "a 10 min swap after each failure" in text
    assert "Repair times change nothing without a finite pool" in text
    assert not any(c.spin.isEnabled() for c in box.repair.values()) and not box.lognormal.isEnabled()
    box.swap.edited.emit(0.0)
    settle(qtbot, win)
    assert not win.scenario().uses_spares and box.note.text().startswith("Model: today's")


def test_the_modes_dialog_opened_before_the_results_says_so_not_that_there_is_no_pool(qtbot):
    """Opened on a scenario with a pool before the main window's results are there (a long full run), the dialog
    said 'no simulated pool (unlimited spares in restart mode)' beside its own line of 89 spare nodes."""
    from planner_gui.ui.spares_modes import SparesModesDialog

    sc = Scenario(gpus=16_384, trials=20, days=5.0).replace(spares=Spares(spare_nodes=12, swap_min=10.0))
    dlg = SparesModesDialog(sc, None)
    qtbot.addWidget(dlg)
    qtbot.waitUntil(lambda: dlg.ready)
    assert "were not ready when this opened" in dlg.note.text() and "no simulated pool" not in dlg.note.text()
    dlg.done(0)


def test_the_modes_dialog_without_a_simulated_pool_names_only_the_lines_it_draws(qtbot):
    """Unlimited spares in restart mode: no pool is simulated, so only the M/G/infinity lines are drawn; the legend
    named the Monte Carlo mean and 95th percentile too."""
    from planner_gui.ui.spares_modes import SparesModesDialog

    dlg = SparesModesDialog(Scenario(gpus=16_384, trials=20, days=5.0), None)
    qtbot.addWidget(dlg)
    qtbot.waitUntil(lambda: dlg.ready)
    names = [label.text for _, label in dlg.repair_plot.legend.items]
    assert names == ["M/G/infinity mean", "M/G/infinity p95"], names
    for item, _label in dlg.repair_plot.legend.items:
        x, _ = item.getData() if hasattr(item, "getData") else item.item.getData()
        assert x is not None and len(x) > 0
    dlg.done(0)


def test_a_second_click_of_a_view_brings_its_window_to_the_front_rather_than_another(make_window, qtbot):
    """Three clicks of each of Spare-Pool Sizing, Repairs and Recovery Modes, Recovery Strategies and Model and
    Sources opened twelve windows and nine compute processes: a window that shows what a new one would is raised
    instead; a changed scenario still gets a sizing window of its own (each says which scenario it was opened on)."""
    from PySide6.QtGui import QAction
    from PySide6.QtWidgets import QDialog

    from planner_gui.ui.spares_modes import SparesModesDialog
    from planner_gui.ui.spares_view import SparesDialog
    from planner_gui.ui.strategies_view import StrategiesDialog

    win = _window(make_window, qtbot, Spares(spare_nodes=4, swap_min=10.0), gpus=8192)
    actions = {a.objectName(): a for a in win.findChildren(QAction)}
    for name in ("actionSparesSizing", "actionSparesModes", "actionStrategies", "actionModel"):
        for _ in range(3):
            actions[name].trigger()
    qtbot.wait(50)

    def shown(kind):
        return [d for d in win.findChildren(kind) if d.isVisible()]

    assert len(shown(SparesDialog)) == 1 and len(shown(SparesModesDialog)) == 1 and len(shown(StrategiesDialog)) == 1
    assert len([d for d in win.findChildren(QDialog, "modelDialog") if d.isVisible()]) == 1
    win.inputs.update(gpus=16_384)
    actions["actionSparesSizing"].trigger()
    assert len(shown(SparesDialog)) == 2
    for kind in (SparesDialog, SparesModesDialog, StrategiesDialog):
        for d in shown(kind):
            d.close()
    for d in win.findChildren(QDialog, "modelDialog"):
        d.close()


def test_the_pools_price_switches_set_their_field_only_and_the_summary_gives_both_costs(make_window, qtbot):
    win = _window(make_window, qtbot, Spares(spare_nodes=8))
    box = win.controls.spares
    assert not box.price.slider.isEnabled() and not box.rent.slider.isEnabled() and box.bought.isEnabled()
    before = win.scenario()
    box.bought.setChecked(True)
    _only_spares_changed(before, win.scenario(), "node_price_usd")
    assert box.price.slider.isEnabled() and box.years.slider.isEnabled()
    before = win.scenario()
    box.rented.setChecked(True)
    _only_spares_changed(before, win.scenario(), "rental_usd_per_node_hour")
    assert "priced at" in box.note.text() and "rented" in box.note.text()
    settle(qtbot, win)
    from planner_gui.ui.spares_controls import spares_cost_text

    sp = win.scenario().spares
    cost = sp.pool_cost_per_hour(8, win.scenario().gpu_hour_cost_usd) * win.scenario().hours
    shown = spares_cost_text(win.last_result.main, win.scenario().gpu_hour_cost_usd)
    assert shown.startswith(f"spare pool {fmt.money(cost)} as priced") and "as GPU-hours" in shown
    box.finite.setChecked(False)  # an unlimited pool costs nothing: its price switches are off
    assert not box.bought.isEnabled() and not box.price.slider.isEnabled()


def test_restart_against_continue_reports_its_progress_run_by_run():
    sc = Scenario(gpus=2048, days=5.0, trials=20, spares=Spares(spare_nodes=4, replica_gpus=256))
    seen: list[float] = []
    counts = np.array([1024, 2048])
    out = restart_vs_continue(sc, counts, progress=seen.append)
    assert set(out) == {"restart", "continue", "restart_sem", "continue_sem"}
    assert seen == sorted(seen) and seen[0] >= 0.0 and seen[-1] == pytest.approx(1.0)
    assert any(0.45 <= f <= 0.55 for f in seen)  # (the restart runs are the first half)
