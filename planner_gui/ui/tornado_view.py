"""The Planning tab's "What is unsure": the tornado of the scenario's estimates
(:mod:`planner_gui.core.analysis.tornado`).

Where the exact model ranks the ends (a few closed-form evaluations, well under the time of a repaint) the bars
follow the scenario at once; elsewhere each end is simulated (paired Monte Carlo, :data:`TRIALS` trials), which
takes seconds to minutes: the view says how long and computes it when asked, in a compute process of its own
(:class:`.jobs.JobRunner`), and says when the bars belong to inputs since changed.
"""

from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from ..core.analysis.sensitivity import has_closed_form
from ..core.analysis.sweep import run_cost
from ..core.analysis.tornado import Bar, Tornado, end_text, tornado, unsure_inputs
from ..core.model.scenario import Scenario
from ..core.session.plan import SENSITIVITY_TRIALS
from ..core.util import fmt
from .jobs import JobFailed, JobRunner
from .plot_items import PALETTE, Hover, axes, brush
from .theme import mark_secondary

__all__ = ["TRIALS", "TornadoView"]

#: Trials of each end where paired Monte Carlo computes the tornado (as the levers' ranking in the full run).
TRIALS = SENSITIVITY_TRIALS
LOW_COLOR, HIGH_COLOR = PALETTE[0], PALETTE[1]


class TornadoView(QWidget):
    """A note, a button to compute (paired Monte Carlo only) and the tornado's plot."""

    def __init__(self) -> None:
        super().__init__()
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(2)
        row = QHBoxLayout()
        self.note = QLabel()
        self.note.setObjectName("tornadoNote")
        self.note.setWordWrap(True)
        mark_secondary(self.note)
        row.addWidget(self.note, 1)
        self.button = QPushButton("Compute")
        self.button.setObjectName("tornadoComputeButton")
        self.button.setToolTip("Simulate every unsure input at its two ends (paired Monte Carlo) in the background")
        self.button.clicked.connect(self._compute)
        self.button.setVisible(False)
        row.addWidget(self.button)
        lay.addLayout(row)
        self.widget = pg.PlotWidget(axisItems=axes())
        self.widget.setObjectName("tornadoPlot")
        self.widget.setTitle("What is unsure")
        self.widget.setMinimumSize(240, 170)
        lay.addWidget(self.widget, 1)
        p = self.widget.getPlotItem()
        p.invertY(True)
        p.getAxis("bottom").enableAutoSIPrefix(False)
        self.low = pg.BarGraphItem(x0=[0], y=[0], height=0.34, width=[0], brush=brush(LOW_COLOR))
        self.high = pg.BarGraphItem(x0=[0], y=[0], height=0.34, width=[0], brush=brush(HIGH_COLOR))
        p.addItem(self.low)
        p.addItem(self.high)
        self.base = pg.InfiniteLine(angle=90, pen=pg.mkPen(pg.getConfigOption("foreground"), width=1.5))
        p.addItem(self.base, ignoreBounds=True)
        # The legend in a row of its own under the axis: over the plot it hid bars at some size whatever its corner.
        self.legend = pg.LegendItem(labelTextSize="8pt", colCount=3)
        p.layout.addItem(self.legend, 5, 0, 1, 3)  # (across the axis column too: it needs the width)
        self.legend.addItem(self.low, "low end")
        self.legend.addItem(self.high, "high end")
        # The line's entry: a sample drawn with its pen (the legend cannot draw an infinite line), its label the value.
        self.base_sample = pg.PlotDataItem([0, 1], [0, 0], pen=self.base.pen)
        self.legend.addItem(self.base_sample, "as entered")
        self.hover = Hover(self.widget, self._describe, line=False)
        self.shown: Tornado | None = None
        self._for: Scenario | None = None  # the scenario the bars shown belong to
        self.scenario: Scenario | None = None  # the scenario on screen
        self._asked: Scenario | None = None  # the scenario being computed
        self._runner: JobRunner | None = None
        self._draw(None)

    # -- what the tab shows -------------------------------------------------------------------------
    def show_scenario(self, sc: Scenario) -> None:
        """The scenario on screen changed (a new result): the exact tornado at once, else the one computed for it
        if any, else the offer to compute it."""
        self.scenario = sc
        if has_closed_form(sc):
            self.button.setVisible(False)
            try:
                t = tornado(sc)
            except ValueError as exc:
                self._set(None, None, f"No tornado: {fmt.clean(str(exc), 200)}")
                return
            self._set(t, sc, "Exact expectations: each unsure input at its low and high end, the rest as entered.")
            return
        self.button.setVisible(True)
        if self._for == self._mc(sc) and self.shown is not None:
            self._set(self.shown, self._for, self._mc_note(self.shown))
            return
        if self._asked == self._mc(sc):
            return  # being computed: its progress is in the note
        seconds = run_cost(self._mc(sc)).seconds * (1 + 2 * len(unsure_inputs(sc)))
        when = "" if self.shown is None else " The bars below belong to the inputs before your last change."
        self.note.setText(
            "No closed form here: each end is simulated (paired Monte Carlo, "
            f"{min(sc.trials, TRIALS):,} trials, about {fmt.short_duration(seconds / 60.0)}).{when}"
        )
        self.button.setText("Compute")
        self.button.setEnabled(True)
        if self.shown is None:
            self._draw(None)

    def current(self) -> Tornado | None:
        """The tornado shown if it belongs to the scenario on screen (what a report of it may include)."""
        if self.shown is None or self.scenario is None or self._for is None:
            return None
        return self.shown if self._for in (self.scenario, self._mc(self.scenario)) else None

    # -- computing ------------------------------------------------------------------------------------
    @staticmethod
    def _mc(sc: Scenario) -> Scenario:
        return sc.replace(trials=min(sc.trials, TRIALS))

    def _compute(self) -> None:
        if self.scenario is None:
            return
        if self._runner is None:
            self._runner = JobRunner(self, self._done, self._progress)
        self._asked = self._mc(self.scenario)
        self._runner.run("unsure", self._asked)
        self.button.setEnabled(False)
        self.note.setText("Computing the tornado (paired Monte Carlo)...")

    def _progress(self, f: float) -> None:
        if self._asked is not None:
            self.note.setText(f"Computing the tornado (paired Monte Carlo): {100 * f:.0f} %")

    def _done(self, request: int, value: object) -> None:
        asked, self._asked = self._asked, None
        self.button.setEnabled(True)
        if isinstance(value, JobFailed):
            self.note.setText(f"The tornado could not be computed: {fmt.clean(str(value), 200)}")
            return
        if not isinstance(value, Tornado) or asked is None:
            return
        self.shown, self._for = value, asked
        if self.scenario is not None and self._mc(self.scenario) == asked:
            self._set(value, asked, self._mc_note(value))
        else:
            self._draw(value)
            self.note.setText("Computed for inputs since changed: compute again for the ones shown.")

    @staticmethod
    def _mc_note(t: Tornado) -> str:
        return (
            f"Paired Monte Carlo ({t.trials or 0:,} trials, the same draws at every end); each end's standard "
            "error is in its readout."
        )

    def _set(self, t: Tornado | None, sc: Scenario | None, note: str) -> None:
        self.shown, self._for = t, sc
        self.note.setText(note)
        self._draw(t)

    # -- drawing -----------------------------------------------------------------------------------------
    def _values(self, t: Tornado) -> tuple[float, list[float], list[float], str]:
        def drawn(v: float | None) -> float:  # (an end that never finishes or cannot run has no bar)
            return v if v is not None and math.isfinite(v) else math.nan

        if t.days is not None:
            lows = [drawn(b.days_low) for b in t.bars]
            highs = [drawn(b.days_high) for b in t.bars]
            return t.days, lows, highs, "days to train"
        lows, highs = [drawn(100 * b.goodput_low) for b in t.bars], [drawn(100 * b.goodput_high) for b in t.bars]
        return 100 * t.goodput, lows, highs, "goodput (%)"

    def _draw(self, t: Tornado | None) -> None:
        self.hover.hide()
        p = self.widget.getPlotItem()
        drawn = t is not None and bool(t.bars)
        for item in (self.low, self.high, self.base):
            item.setVisible(drawn)
        self.legend.setVisible(drawn)
        for side in ("left", "bottom"):
            p.showAxis(side, drawn)
        if not drawn:
            assert t is None or not t.bars
            return
        assert t is not None
        base, lows, highs, what = self._values(t)
        rows = np.arange(len(t.bars), dtype=float)
        lo, hi = np.array(lows), np.array(highs)
        self.low.setOpts(x0=np.minimum(lo, base), width=np.abs(lo - base), y=rows - 0.18, height=0.34)
        self.high.setOpts(x0=np.minimum(hi, base), width=np.abs(hi - base), y=rows + 0.18, height=0.34)
        self.base.setValue(base)
        p.getAxis("left").setTicks([[(i, fmt.clean(b.label, 32)) for i, b in enumerate(t.bars)]])
        how = "exact" if t.exact else "paired Monte Carlo"
        p.setLabel("bottom", f"{what} ({how})")
        self.legend.getLabel(self.base_sample).setText(f"as entered: {base:,.2f}")
        finite = np.concatenate([lo[np.isfinite(lo)], hi[np.isfinite(hi)], [base]])
        span = float(finite.max() - finite.min()) or max(abs(base) * 1e-3, 1e-6)
        p.setXRange(float(finite.min()) - 0.05 * span, float(finite.max()) + 0.05 * span, padding=0)
        p.setYRange(-0.6, len(t.bars) - 0.4, padding=0)

    def _describe(self, x: float, y: float) -> str:
        t = self.shown
        k = round(y)
        if t is None or not 0 <= k < len(t.bars):
            return ""
        return describe_bar(t, t.bars[k])


def describe_bar(t: Tornado, b: Bar) -> str:
    """A bar's readout: the input, its ends and the outcome at each (with its standard error), and why."""

    lo, hi = (fmt.clean(end_text(t, b, which), 200) for which in ("low", "high"))
    return (
        f"{b.label}: {b.low:.4g} -> {lo}; {b.high:.4g} -> {hi} ({b.unit}; as entered {b.value:.4g})\n"
        f"{fmt.clean(b.why, 160)}"
    )
