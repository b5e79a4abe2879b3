"""The "Rates over the run" tab: expected unplanned interruptions per day, and what rate uncertainty does.

Per day of the run (the last one may be partial: its count is shown per day): the expectation from the
scenario's rates and rate profile (:func:`~planner_gui.core.theory.profiles.expected_per_day`, at the rates'
posterior mean when rate uncertainty is on); the same at constant rates when a profile changes them; the
Monte Carlo's mean over the run (its interruptions per trial over the days: the result carries no
per-day counts); and with rate uncertainty, the 5th-95th percentile of the expectation given each
trial's rates (the engine's own draws: the same random stream). The legend names only what is drawn.

Also the summary's words for the variance shares of the JSON report (``uncertainty``).
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QRectF, Qt
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from ..core.model.scenario import Scenario
from ..core.session.plan import PlanResult
from ..core.theory.profiles import expected_per_day, is_flat
from ..core.theory.rates import RatePosterior, job_rates, mean_job_rate
from ..core.util import fmt
from .plot_items import PALETTE, Axis, Hover, brush, pen
from .theme import mark_secondary, secondary_color

__all__ = ["SHARES_TIP", "RatesOverRunView", "day_edges", "per_day", "rate_band", "variance_text"]

#: What the summary's "spread" line means.
SHARES_TIP = (
    "With rate uncertainty on, the p05-p95 range includes both the uncertain rates and chance. 'spread' splits "
    "the variance over trials (law of total variance): the part the rates' uncertainty causes (the variance of "
    "the expectation given each trial's rates) and the part chance adds at known rates. Shares of the variance, "
    "not of the p05-p95 width."
)
LABELS = {
    "expected": "expected per day",
    "constant": "at constant rates",
    "band": "5th-95th percentile of the rates (uncertainty)",
    "monte_carlo": "Monte Carlo: the run's mean per day",
}


def day_edges(sc: Scenario) -> np.ndarray:
    """The days' edges over the run, in days (the last day may be partial)."""
    out: np.ndarray = np.append(np.arange(0.0, sc.days, 1.0), sc.days)
    return out


def per_day(sc: Scenario, rate_per_hour: float | None = None) -> np.ndarray:
    """Expected unplanned interruptions per day in each day of the run (a partial last day: per day)."""
    out: np.ndarray = expected_per_day(sc, rate_per_hour) / np.diff(day_edges(sc))
    return out


def rate_band(sc: Scenario) -> tuple[float, float] | None:
    """The 5th and 95th percentiles of the job's unplanned rate per hour over the trials' draws (the
    engine's own, before the profile), or None without rate uncertainty (or nothing uncertain)."""
    if not sc.rate_uncertainty:
        return None
    posterior = RatePosterior.of(sc.components)
    if not posterior.uncertain.any():
        return None
    drawn = job_rates(sc, sc.failure_rate_per_hour, posterior.draw(sc.seed, sc.trials).sum(axis=1))
    lo, hi = np.quantile(drawn, [0.05, 0.95])
    return float(lo), float(hi)


def variance_text(report: dict) -> tuple[str, str] | None:
    """The summary's lines for interruptions and goodput when the report has rate uncertainty: how much of
    the variance (of which the p05-p95 range is the visible part) the rates cause, and chance."""
    u = report.get("uncertainty")
    if u is None:
        return None

    def line(part: dict) -> str:
        if part["variance_share_rates"] + part["variance_share_chance"] == 0:  # e.g. no interruptions at all
            return "spread: none (every trial the same)"
        return (
            f"spread: {fmt.percent(part['variance_share_rates'])} rates, "
            f"{fmt.percent(part['variance_share_chance'])} chance"
        )

    return line(u["interruptions"]), line(u["goodput"])


class _FillSample(pg.ItemSample):
    """The legend's sample of a filled band (an ``ItemSample`` draws a curve's pen, which a fill has not)."""

    def __init__(self, fill: pg.FillBetweenItem, fill_brush) -> None:
        super().__init__(fill)
        self.fill_brush = fill_brush

    def paint(self, p, *args) -> None:
        p.setPen(pg.mkPen(None))
        p.setBrush(self.fill_brush)
        p.drawRect(QRectF(0, 4, 20, 12))

    def mouseClickEvent(self, event) -> None:  # the band is shown or hidden by the inputs, not by clicks
        event.ignore()


class RatesOverRunView(QWidget):
    """The plot of interruptions per day over the run, and a line of words under it."""

    def __init__(self) -> None:
        super().__init__()
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        self.widget = pg.PlotWidget(axisItems={"bottom": Axis("bottom"), "left": Axis("left")})
        self.widget.setObjectName("ratesOverRunPlot")
        self.widget.setMinimumSize(240, 170)
        self.widget.setTitle("Unplanned interruptions per day over the run")
        self.widget.showGrid(x=False, y=True, alpha=0.15)
        p = self.plot = self.widget.getPlotItem()
        p.setLabel("bottom", "day of the run")
        p.setLabel("left", "interruptions per day")
        color = secondary_color()
        self.legend = p.addLegend(offset=(-10, 10), labelTextSize="8pt", labelTextColor=color)
        self.band_lo = pg.PlotCurveItem(pen=pen(PALETTE[0], 1, alpha=90))
        self.band_hi = pg.PlotCurveItem(pen=pen(PALETTE[0], 1, alpha=90))
        band_brush = brush(PALETTE[0], 60)
        self.band = pg.FillBetweenItem(self.band_lo, self.band_hi, brush=band_brush)
        self._band_sample = _FillSample(self.band, band_brush)
        for item in (self.band_lo, self.band_hi, self.band):
            p.addItem(item)
        self.expected = pg.PlotDataItem(stepMode="center", pen=pen(PALETTE[0], 2))
        self.expected.setCurveClickable(False)
        self.constant = pg.PlotDataItem(pen=pen(color, 1.5, Qt.PenStyle.DashLine))
        self.monte_carlo = pg.PlotDataItem(pen=pen(PALETTE[2], 2, Qt.PenStyle.DotLine))
        for item in (self.expected, self.constant, self.monte_carlo):
            p.addItem(item)
        self.items = {
            "expected": self.expected,
            "constant": self.constant,
            "band": self.band,
            "monte_carlo": self.monte_carlo,
        }
        self._in_legend: list[str] = []
        self.caption = QLabel()
        self.caption.setObjectName("ratesOverRunCaption")
        self.caption.setWordWrap(True)
        mark_secondary(self.caption)
        lay.addWidget(self.widget, 1)
        lay.addWidget(self.caption)
        self.hover = Hover(self.widget, self._describe)
        self.result: PlanResult | None = None
        self._edges = np.zeros(2)
        self._values = np.zeros(1)

    def _set_legend(self, names: list[str]) -> None:
        if names == self._in_legend:
            return
        for name in self._in_legend:
            self.legend.removeItem(LABELS[name])
        for name in names:
            self.legend.addItem(self._band_sample if name == "band" else self.items[name], LABELS[name])
        self._in_legend = names

    def show_result(self, res: PlanResult) -> None:
        """Draw the scenario of ``res``: its expectation per day, and its Monte Carlo mean."""
        self.result = res
        self.hover.hide()
        sc = res.main.scenario
        edges = day_edges(sc)
        mean_rate = mean_job_rate(sc)
        values = per_day(sc, mean_rate)
        self._edges, self._values = edges, values
        self.expected.setData(edges, values)
        shown = ["expected"]
        flat = is_flat(sc.rate_profile, sc.days)
        const = mean_rate * 24.0
        self.constant.setData([0.0, sc.days], [const, const])
        self.constant.setVisible(not flat)
        if not flat:
            shown.append("constant")
        band = rate_band(sc)
        top = max(float(values.max()), const)
        for item in (self.band, self.band_lo, self.band_hi):
            item.setVisible(band is not None)
        if band is not None:
            x = np.repeat(edges, 2)[1:-1]  # the band follows the steps
            lo, hi = (np.repeat(per_day(sc, rate), 2) for rate in band)
            self.band_lo.setData(x, lo)
            self.band_hi.setData(x, hi)
            top = max(top, float(hi.max()))
            shown.append("band")
        mc = float(res.main.trials.unplanned.mean()) / sc.days
        self.monte_carlo.setData([0.0, sc.days], [mc, mc])
        shown.append("monte_carlo")
        top = max(top, mc)
        self._set_legend(shown)
        self.plot.setXRange(0.0, sc.days, padding=0.02)
        self.plot.setYRange(0.0, top * 1.25 if top > 0 else 1.0, padding=0)
        self.caption.setText(self._caption(sc, values, mc, band))

    def _caption(self, sc: Scenario, values: np.ndarray, mc: float, band: tuple[float, float] | None) -> str:
        total = float(np.sum(values * np.diff(self._edges)))
        text = (
            f"Expected over the run: {fmt.count(total)} unplanned interruptions, {values[0]:,.3g} per day on "
            f"day 1 and {values[-1]:,.3g} on the last; the Monte Carlo's run averages {mc:,.3g} per day."
        )
        if band is not None:
            text += (
                f" With the rates uncertain, the expectation per day is within x{band[0] / mean_job_rate(sc):.3g} "
                f"to x{band[1] / mean_job_rate(sc):.3g} of its mean in 90% of the trials."
            )
        return text

    def _describe(self, x: float, y: float) -> str:
        if self.result is None or not (self._edges[0] <= x <= self._edges[-1]):
            return ""
        i = min(int(np.searchsorted(self._edges, x, side="right")) - 1, len(self._values) - 1)
        a, b = self._edges[i], self._edges[i + 1]
        return f"day {a:g} to {b:g}: {self._values[i]:,.3g} expected per day"
