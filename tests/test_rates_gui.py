"""Rates from data in the window: each control changes exactly the input its label names, the summary's
variance shares are the JSON's, the "Rates over the run" plot draws what its legend names and agrees with
the exact expectation, and File > Import Incident Log fits off the GUI thread and turns bad files into
one line in the dialog."""

from __future__ import annotations

import dataclasses
import math
import os

import numpy as np
import pytest
from scipy.special import gammainc
from test_gui import settle

from planner_gui.core.files.presets import load_preset
from planner_gui.core.incidents import generate_log, llama3_prior, sample_components
from planner_gui.core.model.scenario import Scenario
from planner_gui.core.session.inputs import Inputs
from planner_gui.core.theory.profiles import burn_in_profile, expected_per_day, pieces
from planner_gui.core.theory.rates import RatePosterior, evidence_of
from planner_gui.ui.rates_panel import BURN_IN, CONSTANT, TABLE, RatesFromDataPanel
from planner_gui.ui.rates_view import LABELS, per_day, rate_band

pytestmark = pytest.mark.gui

FIELDS = tuple(f.name for f in dataclasses.fields(Scenario))


def changed_fields(a: Scenario, b: Scenario) -> set[str]:
    return {f for f in FIELDS if getattr(a, f) != getattr(b, f)} - {"name"}  # an edited preset renames


@pytest.fixture
def panel(qtbot):
    inputs = Inputs(load_preset("llama3-405b"))
    w = RatesFromDataPanel(inputs)
    qtbot.addWidget(w)
    return w


def choose(panel: RatesFromDataPanel, mode: int) -> None:
    """Choose a mode as the user does (``activated`` fires only for the user's choice)."""
    panel.mode.setCurrentIndex(mode)
    panel.mode.activated.emit(mode)


# -- each control changes exactly its input -----------------------------------------------------------


def test_the_uncertainty_switch_changes_rate_uncertainty_only(panel):
    before = panel.inputs.scenario
    panel.uncertainty.setChecked(True)
    assert panel.inputs.scenario.rate_uncertainty is True
    assert changed_fields(before, panel.inputs.scenario) == {"rate_uncertainty"}
    assert "18 of 18 components" in panel.evidence.text() and panel.evidence.isVisibleTo(panel)
    panel.uncertainty.setChecked(False)
    assert changed_fields(before, panel.inputs.scenario) == set()


def test_burn_in_makes_the_profile_of_its_shape_and_life_on_a_new_cluster_and_nothing_else(panel):
    # (a burn-in is a new cluster's, as the command line's --burn-in says; the New cluster box turns it off again)
    sc0 = panel.inputs.scenario
    choose(panel, BURN_IN)
    assert panel.inputs.scenario.rate_profile == burn_in_profile(0.7, 30.0, sc0.days)
    assert changed_fields(sc0, panel.inputs.scenario) == {"rate_profile", "new_cluster"}
    assert panel.inputs.scenario.new_cluster
    panel.shape.setValue(0.5)
    assert panel.inputs.scenario.rate_profile == burn_in_profile(0.5, 30.0, sc0.days)
    panel.life.setValue(10.0)
    assert panel.inputs.scenario.rate_profile == burn_in_profile(0.5, 10.0, sc0.days)
    assert changed_fields(sc0, panel.inputs.scenario) == {"rate_profile", "new_cluster"}
    p = pieces(panel.inputs.scenario.rate_profile, sc0.days)
    assert panel.summary.text().startswith(f"x{p.multipliers[0]:.3g} at the start")
    # The burn-in covers the run: a longer run remakes it over the new days (as --days then --burn-in).
    panel.inputs.update(days=120.0)
    assert panel.inputs.scenario.rate_profile == burn_in_profile(0.5, 10.0, 120.0)
    assert panel.mode.currentIndex() == BURN_IN
    choose(panel, CONSTANT)
    assert panel.inputs.scenario.rate_profile is None
    assert changed_fields(sc0, panel.inputs.scenario) == {"days", "new_cluster"}


def test_a_burn_in_over_the_multiplier_limit_is_refused_in_words(panel):
    choose(panel, BURN_IN)
    panel.life.setValue(100_000.0)
    made = panel.inputs.scenario.rate_profile
    assert made == burn_in_profile(0.7, 100_000.0, 54.0)
    panel.shape.setValue(0.05)
    assert panel.inputs.scenario.rate_profile == made
    assert "Not applied" in panel.summary.text() and "limit" in panel.summary.text()


def test_the_table_sets_the_profile_row_by_row_and_refuses_bad_rows(panel):
    sc0 = panel.inputs.scenario
    choose(panel, TABLE)
    assert panel.inputs.scenario.rate_profile == ((0.0, 1.0),)
    panel.table.item(0, 1).setText("3")
    assert panel.inputs.scenario.rate_profile == ((0.0, 3.0),)
    panel._add_row()
    assert panel.inputs.scenario.rate_profile == ((0.0, 3.0), (7.0, 1.0))
    panel.table.item(1, 0).setText("10")
    assert panel.inputs.scenario.rate_profile == ((0.0, 3.0), (10.0, 1.0))
    assert changed_fields(sc0, panel.inputs.scenario) == {"rate_profile"}
    for bad, words in (("abc", "row 2: the multiplier: must be a number"), ("-1", "row 2: the multiplier")):
        panel.table.item(1, 1).setText(bad)
        assert panel.inputs.scenario.rate_profile == ((0.0, 3.0), (10.0, 1.0))  # kept
        assert panel.summary.text().startswith("Not applied") and words in panel.summary.text()
    panel.table.item(1, 1).setText("0.5")
    assert panel.inputs.scenario.rate_profile == ((0.0, 3.0), (10.0, 0.5))
    assert not panel.summary.text().startswith("Not applied")
    panel.table.item(1, 0).setText("0")  # days must increase
    assert "days must increase" in panel.summary.text()
    panel.table.item(1, 0).setText("10")
    panel._remove_row()
    assert panel.inputs.scenario.rate_profile == ((0.0, 3.0),)


def test_the_table_keeps_exact_values_it_shows_rounded(panel):
    exact = ((0.0, 1.23456789012), (1.0 / 3.0, 2.0))
    panel.inputs.update(rate_profile=exact)
    assert panel.mode.currentIndex() == TABLE  # a profile not made here is a table
    panel.table.item(1, 1).setText("4")  # editing one cell leaves the others' exact values alone
    assert panel.inputs.scenario.rate_profile == ((0.0, 1.23456789012), (1.0 / 3.0, 4.0))


def test_profile_files_load_and_bad_ones_are_named(panel, tmp_path):
    good, bad = tmp_path / "p.csv", tmp_path / "bad.csv"
    good.write_text("day,multiplier\n0,2\n5,1\n")
    bad.write_text("day,multiplier\n3,2\n")
    choose(panel, TABLE)
    panel.load_file(str(good))
    assert panel.inputs.scenario.rate_profile == ((0.0, 2.0), (5.0, 1.0))
    assert panel.table.rowCount() == 2
    panel.load_file(str(bad))
    assert panel.inputs.scenario.rate_profile == ((0.0, 2.0), (5.0, 1.0))
    assert "Not loaded: bad.csv" in panel.summary.text()
    panel.load_file(str(tmp_path / "missing.csv"))
    assert "Not loaded" in panel.summary.text()


def test_a_scenario_opened_with_a_profile_and_uncertainty_shows_them(panel):
    sc = load_preset("llama3-405b").replace(rate_uncertainty=True, rate_profile=((0.0, 2.0), (9.0, 1.0)))
    panel.inputs.load(sc)
    assert panel.uncertainty.isChecked() and panel.mode.currentIndex() == TABLE
    assert [panel.table.item(r, 0).text() for r in range(2)] == ["0", "9"]
    panel.inputs.load(load_preset("llama3-405b"))
    assert not panel.uncertainty.isChecked() and panel.mode.currentIndex() == CONSTANT


# -- the plot and the summary in the window --------------------------------------------------------------


def _legend_drawn(view) -> list[str]:
    texts = []
    for sample, label in view.legend.items:
        item = sample.item
        assert item.isVisible(), label.text
        if item is view.band:
            lo, hi = view.band_lo.getData()[1], view.band_hi.getData()[1]
            assert np.all(hi > lo) and len(lo) > 0
        else:
            x, y = item.getData()
            (x0, x1), (y0, y1) = view.plot.getViewBox().viewRange()
            assert len(x) and (x >= x0).all() and (x <= x1).all(), label.text
            assert np.isfinite(y).all() and (y >= y0).all() and (y <= y1).all(), label.text
        texts.append(label.text)
    return texts


def test_the_rates_tab_draws_what_its_legend_names_and_agrees_with_the_exact_model(make_window, qtbot):
    win = make_window()
    assert win.tabs.tabText(win.tabs.indexOf(win.rates_view)) == "Rates over the run"
    view = win.rates_view
    sc = win.scenario()
    assert _legend_drawn(view) == [LABELS["expected"], LABELS["monte_carlo"]]  # constant rates: one line
    edges, values = view.expected.getData()
    # The days add up to the exact model's expectation, and a constant rate is flat.
    assert float(np.sum(values * np.diff(edges))) == pytest.approx(win.last_result.main.expected.unplanned, rel=1e-12)
    assert np.allclose(values, sc.failure_rate_per_hour * 24.0, rtol=1e-12)
    mc = view.monte_carlo.getData()[1]
    assert mc[0] == pytest.approx(float(win.last_result.main.trials.unplanned.mean()) / sc.days, rel=1e-12)

    burn = burn_in_profile(0.7, 30.0, sc.days)
    win.inputs.update(rate_profile=burn, rate_uncertainty=True)
    settle(qtbot, win)
    assert _legend_drawn(view) == [LABELS[k] for k in ("expected", "constant", "band", "monte_carlo")]
    res = win.last_result.main
    edges, values = view.expected.getData()
    assert float(np.sum(values * np.diff(edges))) == pytest.approx(res.expected.unplanned, rel=1e-9)
    # Day 1 by hand: the burn-in's pieces that day, each its multiplier times its hours, at the posterior mean.
    # Posterior mean: each of the 18 causes' (count + 1/2) over the same exposure, against the counts' 419.
    mean_rate = res.scenario.failure_rate_per_hour * (419 + 18 * 0.5) / 419
    day1 = sum(m * max(0.0, min(b, 1.0) - a) * 24.0 for (a, m), (b, _) in zip(burn, [*burn[1:], (1e9, 0)]))
    assert values[0] == pytest.approx(mean_rate * day1, rel=1e-9)
    # The Monte Carlo's mean per day, with its standard error, agrees with the exact expectation.
    n = res.trials.unplanned
    z = (n.mean() - res.expected.unplanned) / (n.std(ddof=1) / math.sqrt(len(n)))
    assert abs(z) < 4.0
    assert "spread:" in win.summary.interruptions.detail.text()
    win.tabs.setCurrentWidget(view)  # painted (a legend sample that cannot paint its item fails here)
    assert not view.grab().isNull()
    win.inputs.update(rate_profile=None, rate_uncertainty=False)
    settle(qtbot, win)
    assert _legend_drawn(view) == [LABELS["expected"], LABELS["monte_carlo"]]
    assert not view.grab().isNull()


def test_the_rate_band_is_the_posteriors_5th_to_95th_percentile():
    """The band's rates are the engine's draws: their percentiles agree with the Gamma posterior's (one
    scale: Llama 3's evidence), within the sampling error of a quantile."""
    sc = load_preset("llama3-405b").replace(rate_uncertainty=True, trials=4000)
    lo, hi = rate_band(sc)
    post = RatePosterior.of(sc.components)
    scales, shapes = post.groups()
    assert len(scales) == 1
    per_job = sc.failure_rate_per_hour / sc.rate_per_gpu_hour
    for value, q in ((lo, 0.05), (hi, 0.95)):
        f = float(gammainc(shapes[0], value / per_job / scales[0]))
        assert abs(f - q) < 4.0 * math.sqrt(q * (1 - q) / sc.trials), (q, f)
    assert rate_band(sc.replace(rate_uncertainty=False)) is None
    np.testing.assert_allclose(per_day(sc) * 1.0, expected_per_day(sc), rtol=1e-12)  # whole days


def test_summary_shares_are_the_jsons_and_half_and_half_at_the_evidences_own_exposure(make_window, qtbot):
    """By hand: with exposure E of the evidence and I of the run (GPU-hours), the rates' part of the
    interruptions' variance is I^2 Var(rate) = I^2 (n + 1/2) / E^2 and chance's is I E[rate] = I (n + 1/2) / E,
    so the rates' share is (I/E) / (1 + I/E): 50 % at Llama 3's own 16,384 GPUs x 54 days."""
    win = make_window()
    win.controls.rates_from_data.uncertainty.setChecked(True)
    settle(qtbot, win)
    doc = win.last_result.main.to_json_dict()
    share = doc["uncertainty"]["interruptions"]["variance_share_rates"]
    assert share == pytest.approx(0.5, abs=1e-12)
    text = win.summary.interruptions.detail.text()
    assert "spread: 50.0% rates, 50.0% chance" in text
    g = doc["uncertainty"]["goodput"]
    assert f"{100 * g['variance_share_rates']:.1f}% rates" in win.summary.goodput.detail.text()
    win.inputs.update(gpus=100_000)
    settle(qtbot, win)
    ratio = 100_000 / 16_384  # the run's exposure over the evidence's
    assert f"{100 * ratio / (1 + ratio):.1f}% rates" in win.summary.interruptions.detail.text()
    win.controls.rates_from_data.uncertainty.setChecked(False)
    settle(qtbot, win)
    assert "spread" not in win.summary.interruptions.detail.text()


def test_the_component_bars_are_the_expected_counts_with_the_profile_and_the_posterior(make_window, qtbot):
    base = load_preset("llama3-405b").replace(gpus=100_000)
    burn = burn_in_profile(0.7, 30.0, base.days)
    win = make_window(base.replace(rate_profile=burn, rate_uncertainty=True), restore=False)
    settle(qtbot, win)
    res = win.last_result.main
    sc = res.scenario
    # By hand: (count + 1/2) / count x rate x GPUs x the profile's integral (its pieces' multipliers x hours).
    integral = sum(m * (b - a) * 24.0 for (a, m), (b, _) in zip(burn, [*burn[1:], (sc.days, 0)]))
    by = res.trials.by_component
    shown = {r[0]: r for r in win.plots._comp_rows_shown}
    checked = 0
    for i, c in enumerate(sc.components):
        if c.name not in shown:
            continue
        ev = evidence_of(c)
        want = c.rate_per_gpu_hour * (ev.count + 0.5) / ev.count * sc.gpus * integral
        assert shown[c.name][1] == pytest.approx(want, rel=1e-9), c.name
        se = by[:, i].std(ddof=1) / math.sqrt(len(by))
        assert abs(shown[c.name][2] - want) <= 4.0 * se, c.name  # the Monte Carlo's dot
        checked += 1
    assert checked >= 3
    assert sum(win.plots.component_bars().values()) == pytest.approx(res.expected.unplanned, rel=1e-9)
    win.inputs.update(rate_profile=((0.0, 0.0), (27.0, 1.0)), rate_uncertainty=False)  # none in the first half
    settle(qtbot, win)
    sc = win.last_result.main.scenario
    bars = win.plots.component_bars()
    for c in sc.components:
        if c.name in bars:
            assert bars[c.name] == pytest.approx(c.rate_per_gpu_hour * sc.gpus * (sc.days - 27.0) * 24.0, rel=1e-12)


# -- importing an incident log ------------------------------------------------------------------------


@pytest.fixture
def sample_log(tmp_path):
    path = tmp_path / "incidents.csv"
    path.write_text(generate_log(sample_components(), 2048, 60.0, shape=0.7, seed=3))
    return path


def test_import_shows_the_fit_and_uses_it_as_the_scenario(make_window, qtbot, sample_log):
    from planner_gui.core.incidents import fit_log

    win = make_window()
    base = win.scenario()
    dlg = win.import_incident_log(sample_log)
    dlg.gpus.setValue(2048)
    dlg.start_fit()
    qtbot.waitUntil(lambda: dlg.fit is not None, timeout=30_000)
    want = fit_log(sample_log, 2048, prior=llama3_prior())  # the window's default prior, as the command line's
    assert dlg.table.rowCount() == len(want.components) + 1
    first = want.components[0]
    assert dlg.table.item(0, 0).text() == first.name
    assert dlg.table.item(0, 4).text() == f"{first.rate_low * 24_000:.3g}-{first.rate_high * 24_000:.3g}"
    assert want.trend.verdict in dlg.details.text() and "Window:" in dlg.details.text()
    assert dlg.with_trend.isEnabled()
    dlg.use_button.click()
    qtbot.waitUntil(lambda: not dlg.isVisible(), timeout=5_000)
    assert win.scenario() == want.scenario(base)
    assert win.dirty


def test_an_edit_withdraws_the_fit_until_refitted_and_enter_never_uses_it(make_window, qtbot, sample_log):
    from PySide6.QtCore import Qt

    from planner_gui.core.incidents import fit_log

    win = make_window()
    base = win.scenario()
    dlg = win.import_incident_log(sample_log)  # read, not fitted: the GPUs the log watched have no default
    qtbot.waitUntil(lambda: not dlg.fitting, timeout=30_000)
    assert dlg.fit is None and not dlg.use_button.isEnabled() and "Type the GPUs" in dlg.status.text()
    dlg.gpus.setValue(2048)  # the log's cluster
    assert dlg.fit is None and not dlg.use_button.isEnabled() and "fitting again" in dlg.status.text()
    qtbot.keyClick(dlg.gpus, Qt.Key.Key_Return)  # fits now; does not accept
    assert dlg.isVisible() and dlg.result() == 0 and dlg.scenario is None
    qtbot.waitUntil(lambda: dlg.fit is not None, timeout=30_000)
    assert dlg.fit.gpus == 2048 and dlg.use_button.isEnabled()
    dlg.end.setText("")
    qtbot.keyClicks(dlg.end, "2030-01-01")  # typed: stale at once, refitted when typing stops
    assert dlg.fit is None and not dlg.use_button.isEnabled()
    qtbot.waitUntil(lambda: dlg.fit is not None, timeout=30_000)
    want = fit_log(sample_log, 2048, None, dlg._window()[1], llama3_prior())
    assert dlg.fit.hours == want.hours and dlg.fit.gpus == 2048
    qtbot.keyClick(dlg.end, Qt.Key.Key_Enter)
    assert dlg.isVisible() and dlg.scenario is None
    qtbot.waitUntil(lambda: dlg.fit is not None, timeout=30_000)
    dlg.use_button.click()
    qtbot.waitUntil(lambda: not dlg.isVisible(), timeout=5_000)
    assert win.scenario() == want.scenario(base)


def test_a_bad_log_gives_one_line_in_the_dialog_never_a_traceback(make_window, qtbot, tmp_path):
    win = make_window()
    cases = {
        "empty.csv": b"",
        "no_component.csv": b"timestamp\n2025-01-01T00:00:00\n",
        "bad_time.csv": b"timestamp,component\nyesterday,GPU\n",
        "binary.csv": bytes(range(256)) * 10,
    }
    for name, data in cases.items():
        path = tmp_path / name
        path.write_bytes(data)
        dlg = win.import_incident_log(path)
        qtbot.waitUntil(lambda dlg=dlg: not dlg.fitting and dlg.error != "", timeout=30_000)
        assert "\n" not in dlg.error and "Traceback" not in dlg.error, name
        assert dlg.status.text().startswith("Cannot use this log"), name
        assert not dlg.use_button.isEnabled()
        dlg.reject()
    dlg = win.import_incident_log(tmp_path / "missing.csv")
    qtbot.waitUntil(lambda: dlg.error != "", timeout=30_000)
    dlg.end.setText("not a time")
    dlg.start_fit()
    assert dlg.error.startswith("Window end:")
    dlg.reject()


def test_a_large_log_is_fitted_while_the_window_stays_responsive(make_window, qtbot, tmp_path):
    """A log near the size limit takes seconds to fit: the GUI thread keeps turning meanwhile."""
    from PySide6.QtCore import QTimer

    path = tmp_path / "big.csv"
    path.write_text(generate_log(sample_components(), 200_000, 365.0, shape=0.7, seed=1))
    win = make_window(load_preset("llama3-405b").replace(gpus=200_000), restore=False)
    ticks: list[int] = []
    timer = QTimer()
    timer.timeout.connect(lambda: ticks.append(1))
    timer.start(20)
    dlg = win.import_incident_log(path)  # reads the log at once (no fit without the GPUs it watched)
    assert dlg.fitting  # returned at once: the reading runs in the dialog's compute process
    assert dlg._jobs._controller._process is None or dlg._jobs._controller._process.pid != os.getpid()
    dlg.gpus.setValue(200_000)
    dlg.start_fit()  # asked meanwhile: runs after the first, whose outcome is dropped
    assert dlg.fitting
    qtbot.waitUntil(lambda: dlg.fit is not None, timeout=120_000)
    assert not dlg.fitting and dlg.fit.gpus == 200_000
    timer.stop()
    assert len(ticks) >= 5
    jobs = dlg._jobs
    dlg.reject()
    qtbot.waitUntil(lambda: not jobs.alive, timeout=10_000)  # closing it stops its process


def test_the_gpus_the_log_watched_must_be_typed_and_the_hint_follows_them(make_window, qtbot, sample_log):
    """No default (the scenario's 100,000 GPUs made a 2,048-GPU log's rates 49x too low); the note under the box
    says what the typed count means; the prior can be turned off, and the fit follows it."""
    from planner_gui.core.incidents import fit_log

    win = make_window(load_preset("h100-100k"))
    dlg = win.import_incident_log(sample_log)
    qtbot.waitUntil(lambda: not dlg.fitting, timeout=30_000)
    assert dlg.gpus.value() == 0 and dlg.gpus.text() == "type it" and dlg.fit is None
    assert "100,000" not in dlg.gpus_note.text() and "waits for it" in dlg.gpus_note.text()
    assert "incidents read" in dlg.status.text() and not dlg.use_button.isEnabled()
    header = dlg.table.horizontalHeader()  # before a fit, every column as wide as its header's words
    for i in range(dlg.table.columnCount()):
        words = header.fontMetrics().horizontalAdvance(dlg.table.horizontalHeaderItem(i).text())
        assert header.sectionSize(i) >= words, (dlg.table.horizontalHeaderItem(i).text(), header.sectionSize(i))
    dlg.gpus.setValue(2048)
    assert dlg.gpus_note.text() == "Each rate is its count over 2,048 GPUs x the window."
    qtbot.waitUntil(lambda: dlg.fit is not None, timeout=30_000)
    assert dlg.fit.gpus == 2048 and dlg.fit.prior is not None
    assert dlg.table.horizontalHeaderItem(6).text() == "Prior's share"
    assert dlg.table.rowCount() == len(dlg.fit.components) + 1 == 20  # every Llama 3 cause kept
    dlg.prior.setCurrentIndex(1)  # the log alone
    assert dlg.fit is None
    qtbot.waitUntil(lambda: dlg.fit is not None, timeout=30_000)
    assert dlg.fit.prior is None and dlg.fit == fit_log(sample_log, 2048)
    dlg.reject()


def test_a_bad_log_is_said_before_the_gpus_are_typed(make_window, qtbot, tmp_path):
    win = make_window()
    path = tmp_path / "bad.csv"
    path.write_bytes(b"timestamp,component\nyesterday,GPU\n")
    dlg = win.import_incident_log(path)
    qtbot.waitUntil(lambda: dlg.error != "", timeout=30_000)
    assert dlg.gpus.value() == 0 and dlg.status.text().startswith("Cannot use this log") and "yesterday" in dlg.error
    dlg.reject()


def test_the_logs_trend_carried_on_is_the_power_law_from_the_logs_end(sample_log):
    from planner_gui.core.incidents import fit_log
    from planner_gui.core.theory.profiles import power_law_profile
    from planner_gui.ui.incident_dialog import fitted_scenario

    fit = fit_log(sample_log, 2048)
    base = load_preset("llama3-405b")
    plain = fitted_scenario(fit, base, with_trend=False)
    assert plain == fit.scenario(base) and plain.rate_profile is None
    sc = fitted_scenario(fit, base, with_trend=True)
    assert sc.rate_profile == power_law_profile(fit.power_law.shape, fit.hours, base.days, fit.hours / 24.0)
    assert sc.replace(rate_profile=None) == plain
    # By hand: the power law's rate at age t is shape (t / W)^(shape - 1) times the log's average, so its
    # mean over the run [W, W + D] is ((W + D)^shape - W^shape) / (D W^(shape - 1)) of it.
    k, w, d = fit.power_law.shape, fit.hours, base.days * 24.0
    assert sum(
        m * (b - a) for (a, m), (b, _) in zip(sc.rate_profile, [*sc.rate_profile[1:], (base.days, 0)])
    ) / base.days == pytest.approx(((w + d) ** k - w**k) / (d * w ** (k - 1)), rel=1e-9)


def test_no_spread_reads_as_none_not_zero_shares():
    from planner_gui.ui.rates_view import variance_text

    zero = {"variance_share_rates": 0.0, "variance_share_chance": 0.0}
    some = {"variance_share_rates": 0.25, "variance_share_chance": 0.75}
    lines = variance_text({"uncertainty": {"interruptions": zero, "goodput": some}})
    assert lines is not None
    assert lines[0] == "spread: none (every trial the same)"
    assert lines[1].startswith("spread: 25") and "75" in lines[1]
    assert variance_text({}) is None


@pytest.mark.gui
def test_time_between_interruptions_says_it_is_an_average_over_the_window(make_window, qtbot):
    """Where rates vary the time between interruptions is the window over the expected count (a burn-in's gap
    is 23 min where the base rates' is 30), and the summary says it is an average."""
    from planner_gui.core.files.presets import load_preset
    from planner_gui.core.theory.profiles import burn_in_profile
    from planner_gui.core.util import fmt

    win = make_window(load_preset("llama3-405b").replace(trials=200), restore=False)
    settle(qtbot, win)
    assert "on average over the window" not in win.summary.every.detail.text()
    win.inputs.update(rate_uncertainty=True)
    settle(qtbot, win)
    assert "on average over the window" in win.summary.every.detail.text()
    win.inputs.update(rate_uncertainty=False, rate_profile=burn_in_profile(0.7, 30, 54.0), new_cluster=True)
    settle(qtbot, win)
    res = win.last_result.main
    sc = res.scenario
    assert "on average over the window" in win.summary.every.detail.text()
    assert win.summary.every.value.text() == fmt.every(sc.hours / res.expected.unplanned)
    assert win.summary.every.value.text() != fmt.every(sc.cluster_mtbf_hours)
    # One GPU on the same footing as the job: the job's gap times its GPUs, not the base rates' 5.8 years.
    one_gpu = fmt.every(sc.hours / res.expected.unplanned * sc.gpus)
    assert f"one GPU: {one_gpu}" in win.summary.every.detail.text() and one_gpu != fmt.every(sc.gpu_mtbf_hours)


def test_a_bad_log_is_the_users_one_line_not_a_program_failure_in_the_log(make_window, qtbot, tmp_path, caplog):
    """A log the fit refuses was logged as 'ERROR computation failed' with a traceback: it is the user's file, said
    in the dialog; the log notes it at INFO."""
    import logging

    win = make_window()
    path = tmp_path / "bad.csv"
    path.write_bytes(b"timestamp,component\nyesterday,GPU\n")
    with caplog.at_level(logging.INFO, logger="planner_gui"):
        dlg = win.import_incident_log(path)
        qtbot.waitUntil(lambda: dlg.error != "", timeout=30_000)
    assert "yesterday" in dlg.error
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR], [r.getMessage() for r in caplog.records]
    assert any("refused its inputs" in r.getMessage() for r in caplog.records)
    dlg.reject()
