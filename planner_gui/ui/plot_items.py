"""Building blocks of the result plots: axes for people, a band with its legend, a hover readout."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QColor

from ..core import fmt

__all__ = ["PALETTE", "pen", "brush", "CountAxis", "DurationAxis", "PercentAxis", "Band", "BandSample", "Hover",
           "MarkedLine", "duration_text", "nearest"]

# Tableau 10: distinguishable in light and dark themes.
PALETTE = ["#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7", "#9c755f",
           "#bab0ac"]


def pen(color: str | QColor, width: float = 2.0, style=Qt.PenStyle.SolidLine, alpha: int = 255) -> pg.QtGui.QPen:
    c = QColor(color)
    c.setAlpha(alpha)
    p = pg.mkPen(c, width=width)
    p.setStyle(style)
    p.setCosmetic(True)
    return p


def brush(color: str | QColor, alpha: int = 255) -> pg.QtGui.QBrush:
    c = QColor(color)
    c.setAlpha(alpha)
    return pg.mkBrush(c)


class CountAxis(pg.AxisItem):
    """An axis of log10(count) positions labelled with counts: 1k, 16k, 1M (a decade per tick)."""

    def __init__(self, orientation: str) -> None:
        super().__init__(orientation)
        self.enableAutoSIPrefix(False)

    def tickValues(self, minVal, maxVal, size):  # noqa: N802, N803 - pyqtgraph API
        lo, hi = math.floor(minVal), math.ceil(maxVal)
        majors = [float(v) for v in range(lo, hi + 1)]
        if len(majors) > 8:
            majors = majors[:: math.ceil(len(majors) / 8)]
        minors = [math.log10(m) + v for v in range(lo, hi + 1) for m in (2, 5)] if len(majors) <= 3 else []
        return [(1.0, majors), (0.3, minors)]

    def tickStrings(self, values, scale, spacing):  # noqa: N802 - pyqtgraph API
        return [fmt.compact(10.0 ** v).replace(" ", "") for v in values]


def duration_text(minutes: float) -> str:
    """A checkpoint interval for people: 0.6 s, 45 s, 2.2 min, 3.0 h, 2.5 days."""
    return fmt.duration_hours(minutes / 60.0)


#: Durations (minutes) an interval axis puts its ticks on, with their labels.
_DURATION_TICKS = [(1 / 60, "1 s"), (10 / 60, "10 s"), (1.0, "1 min"), (10.0, "10 min"), (60.0, "1 h"),
                   (600.0, "10 h"), (1440.0, "1 d"), (14_400.0, "10 d"), (144_000.0, "100 d"),
                   (525_600.0, "1 y")]


class DurationAxis(pg.AxisItem):
    """An axis of log10(minutes) positions labelled with durations: 1 s, 1 min, 1 h, 1 d."""

    def __init__(self, orientation: str) -> None:
        super().__init__(orientation)
        self.enableAutoSIPrefix(False)

    def tickValues(self, minVal, maxVal, size):  # noqa: N802, N803 - pyqtgraph API
        majors = [math.log10(m) for m, _ in _DURATION_TICKS if minVal <= math.log10(m) <= maxVal]
        minors = [math.log10(m * k) for m, _ in _DURATION_TICKS[:-1] for k in (2, 5)
                  if minVal <= math.log10(m * k) <= maxVal]
        if len(majors) < 2:  # a narrow range: fall back to plain decades of minutes
            return super().tickValues(minVal, maxVal, size)
        return [(1.0, majors), (0.3, minors)]

    def tickStrings(self, values, scale, spacing):  # noqa: N802 - pyqtgraph API
        labels = {round(math.log10(m), 9): text for m, text in _DURATION_TICKS}
        return [labels.get(round(v, 9), duration_text(10.0 ** v)) for v in values]


class PercentAxis(pg.AxisItem):
    """Goodput in percent; never scientific notation or SI prefixes."""

    def __init__(self, orientation: str) -> None:
        super().__init__(orientation)
        self.enableAutoSIPrefix(False)

    def tickStrings(self, values, scale, spacing):  # noqa: N802 - pyqtgraph API
        digits = max(0, min(3, -math.floor(math.log10(spacing)))) if spacing > 0 else 0
        return [f"{v:.{digits}f}" for v in values]


class Band:
    """A Monte Carlo mean curve over a filled p05-p95 band, with one legend entry for both.

    The band's edges are plain curves (a ``PlotDataItem`` without a pen would never pass its data on
    to its curve, and the fill would stay empty).
    """

    def __init__(self, plot: pg.PlotItem, color: str, legend: pg.LegendItem | None) -> None:
        self.lo = pg.PlotCurveItem(pen=pen(color, 1, alpha=0))
        self.hi = pg.PlotCurveItem(pen=pen(color, 1, alpha=0))
        plot.addItem(self.lo)
        plot.addItem(self.hi)
        self.fill_brush = brush(color, 70)
        self.fill = pg.FillBetweenItem(self.lo, self.hi, brush=self.fill_brush)
        plot.addItem(self.fill)
        self.mean = plot.plot(pen=pen(color), antialias=True)
        if legend is not None:
            legend.addItem(BandSample(self), "Monte Carlo mean, p05-p95")

    def set_band_visible(self, on: bool) -> None:
        for item in (self.lo, self.hi, self.fill):
            item.setVisible(on)

    def set(self, x, lo, mean, hi) -> None:
        self.lo.setData(x, lo)
        self.hi.setData(x, hi)
        self.mean.setData(x, mean)


class BandSample(pg.ItemSample):
    """The legend's sample of a :class:`Band`: the band's fill with its mean line across; a click shows
    or hides both."""

    def __init__(self, band: Band) -> None:
        super().__init__(band.mean)
        self.band = band

    def paint(self, p, *args) -> None:
        p.setPen(pg.mkPen(None))
        p.setBrush(self.band.fill_brush)
        p.drawRect(QRectF(0, 4, 20, 12))
        p.setPen(self.band.mean.opts["pen"])
        p.drawLine(QPointF(0, 10), QPointF(20, 10))

    def mouseClickEvent(self, event) -> None:  # noqa: N802 - pyqtgraph API
        super().mouseClickEvent(event)
        self.band.set_band_visible(self.item.isVisible())


class MarkedLine:
    """A vertical line with a label that stays inside the plot: beside the line, at a fixed height."""

    def __init__(self, plot: pg.PlotItem, line_pen, color, height: float) -> None:
        self.vb, self.height = plot.getViewBox(), height
        self.line = pg.InfiniteLine(0, angle=90, pen=line_pen)
        self.text = pg.TextItem(color=color, anchor=(0, 0.5), fill=brush(pg.getConfigOption("background"), 200))
        plot.addItem(self.line, ignoreBounds=True)
        plot.addItem(self.text, ignoreBounds=True)
        self.vb.sigRangeChanged.connect(self.place)

    def set(self, x: float, label: str) -> None:
        self.line.setValue(x)
        self.text.setText(label)
        self.place()

    def place(self, *_args) -> None:
        (x0, x1), (y0, y1) = self.vb.viewRange()
        x = self.line.value()
        width = self.text.boundingRect().width() * (self.vb.viewPixelSize()[0] or 0.0)
        self.text.setAnchor((1, 0.5) if x + width > x1 else (0, 0.5))  # flip to the left at the right edge
        self.text.setPos(x, y0 + self.height * (y1 - y0))


class Hover:
    """The values under the mouse: a readout in the plot's top corner and, for curves, a vertical line.

    ``describe(x, y)`` (view coordinates) returns the text, or "" for nothing there.
    """

    def __init__(self, plot: pg.PlotItem, describe: Callable[[float, float], str], line: bool = True) -> None:
        self.plot, self.describe = plot, describe
        self.text = pg.TextItem(anchor=(1, 0), color=pg.getConfigOption("foreground"),
                                fill=brush(pg.getConfigOption("background"), 220))
        self.text.setZValue(100)
        plot.addItem(self.text, ignoreBounds=True)
        self.line = pg.InfiniteLine(angle=90, pen=pen("#808080", 1, Qt.PenStyle.DotLine)) if line else None
        if self.line is not None:
            plot.addItem(self.line, ignoreBounds=True)
        self.hide()
        self._proxy = pg.SignalProxy(plot.scene().sigMouseMoved, rateLimit=30, slot=self._moved)

    def hide(self) -> None:
        self.text.setVisible(False)
        if self.line is not None:
            self.line.setVisible(False)

    def _moved(self, event) -> None:
        pos = event[0]
        vb = self.plot.getViewBox()
        if not vb.sceneBoundingRect().contains(pos):
            self.hide()
            return
        p = vb.mapSceneToView(pos)
        self.show_at(p.x(), p.y())

    def show_at(self, x: float, y: float) -> str:
        """Show the readout for view point (x, y); returns its text."""
        text = self.describe(x, y)
        if not text:
            self.hide()
            return ""
        (x0, x1), (y0, y1) = self.plot.getViewBox().viewRange()
        inverted = self.plot.getViewBox().yInverted()
        self.text.setText(text)
        self.text.setPos(QPointF(x1, y0 if inverted else y1))
        self.text.setVisible(True)
        if self.line is not None:
            self.line.setValue(x)
            self.line.setVisible(True)
        return text


def nearest(xs: np.ndarray, x: float) -> int:
    """Index of the point of ``xs`` nearest to ``x``."""
    return int(np.argmin(np.abs(np.asarray(xs) - x)))
