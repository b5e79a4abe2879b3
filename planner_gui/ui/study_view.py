"""File > Open Study Results: a study as a heatmap over two chosen inputs, and its Sobol indices as bars.

The heatmap's cell is the mean of the chosen output (goodput by default) over the study's scenarios whose
two inputs fall in that cell, whatever their other inputs (:func:`~planner_gui.core.study.summary.heatmap`);
an empty cell (no scenario there) is left blank. The bars are the first-order and total Sobol indices of
goodput with their 95% bootstrap intervals, when the study is a Sobol design. Reading the file and the
indices runs in a compute process of the view's own (:mod:`.jobs`), off the window's interpreter.
"""

from __future__ import annotations

import html
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QCloseEvent, QFontMetricsF
from PySide6.QtWidgets import (
    QComboBox,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QMessageBox,
    QVBoxLayout,
    QWidget,
)

from ..core.session.jobs import STUDY_OUTPUT
from ..core.study.sobol import SobolIndices
from ..core.study.store import StudyResults
from ..core.study.summary import NO_INPUT, Heatmap, drawable_outputs, first_axes
from ..core.study.summary import heatmap as study_heatmap
from ..core.util import fmt
from .collector import collect_on_gui_thread
from .jobs import JobFailed, JobRunner
from .plot_items import PALETTE, brush, pen, plot_item
from .theme import mark_secondary
from .widgets import in_turns

__all__ = ["LEGEND", "StudyView", "open_study", "pick_study_file"]

#: The bars' legend entries.
LEGEND = {"first": "first-order (alone)", "total": "total (with interactions)"}
#: The widest an input's name may be beside the bars (pixels); longer ones are elided in the middle.
NAME_WIDTH = 150.0
#: The output the heatmap shows first.
DEFAULT_OUTPUT = STUDY_OUTPUT


class StudyView(QWidget):
    """A window of one study's results."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent, Qt.WindowType.Window)
        collect_on_gui_thread()  # its compute link's threads must never run Qt destructors (see .collector)
        self.setObjectName("studyView")
        self.setWindowTitle("Study results - planner-gui")
        self.resize(1100, 620)
        self.results: StudyResults | None = None
        self.sobol: SobolIndices | None = None
        self.heat: Heatmap | None = None
        self._jobs: JobRunner | None = None  # while a file is read (in a compute process of its own)
        self.loading = False

        self.title = QLabel("Reading...")
        self.title.setObjectName("studyTitle")
        self.title.setWordWrap(True)
        self.x_box, self.y_box, self.out_box = QComboBox(), QComboBox(), QComboBox()
        for box, name in ((self.x_box, "studyX"), (self.y_box, "studyY"), (self.out_box, "studyOutput")):
            box.setObjectName(name)
        self._x_prev = self._y_prev = ""
        self.x_box.currentIndexChanged.connect(lambda _i: self._axis_chosen(self.x_box))
        self.y_box.currentIndexChanged.connect(lambda _i: self._axis_chosen(self.y_box))
        self.out_box.currentIndexChanged.connect(self._redraw_heatmap)
        self.pick_row = QWidget()
        pick = QHBoxLayout(self.pick_row)
        pick.setContentsMargins(0, 0, 0, 0)
        for text, box in (("Across:", self.x_box), ("Up:", self.y_box), ("Colour:", self.out_box)):
            pick.addWidget(QLabel(text))
            pick.addWidget(box, 1)

        self.no_heatmap = QLabel("")
        self.no_heatmap.setObjectName("studyNoHeatmap")
        self.no_heatmap.setWordWrap(True)
        self.no_heatmap.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.no_heatmap.setVisible(False)
        self.cell_note = QLabel("")
        mark_secondary(self.cell_note)

        #: The inputs as the bars list them, top to bottom.
        self.sobol_order: list[str] = []
        self.bars: dict[str, pg.BarGraphItem] = {}
        self.whiskers: dict[str, pg.ErrorBarItem] = {}
        self.sobol_note = QLabel("")
        self.sobol_note.setObjectName("studySobolNote")
        self.sobol_note.setWordWrap(True)

        left = QVBoxLayout()
        left.addWidget(self.pick_row)
        left.addWidget(self.no_heatmap, 1)
        left.addWidget(self.cell_note)
        right = QVBoxLayout()
        right.addWidget(self.sobol_note)
        # The two plots are built a turn of the event loop at a time once the window is up (widgets.in_turns:
        # at once they held it 60-75 ms); results read before they are are shown when they are (``ready``).
        self.ready = False
        self._pending: tuple[StudyResults, SobolIndices | str | None] | None = None
        steps = [
            self._build_heatmap,
            self._build_colour_bar,
            lambda: left.insertWidget(1, self.heat_plot, 1),
            self._build_bars,
            lambda: right.insertWidget(0, self.bar_plot, 1),
            self._built,
        ]
        in_turns(self, steps)
        body = QHBoxLayout()
        body.addLayout(left, 3)
        body.addLayout(right, 2)
        outer = QVBoxLayout(self)
        outer.addWidget(self.title)
        outer.addLayout(body, 1)

    # -- plots ---------------------------------------------------------------------------------------------
    def _build_heatmap(self) -> None:
        # (a child of the window from the start, so that it goes with it if it closes first; hidden until placed)
        self.heat_plot = pg.PlotWidget(self, plotItem=plot_item())
        self.heat_plot.setObjectName("studyHeatmap")
        self.heat_plot.setMenuEnabled(False)
        self.heat_plot.setMouseEnabled(False, False)

    def _build_colour_bar(self) -> None:
        self.image = pg.ImageItem(axisOrder="row-major")
        self.heat_plot.addItem(self.image)
        self.colorbar = pg.ColorBarItem(colorMap=pg.colormap.get("viridis"), interactive=False, width=14)
        self.colorbar.axis.enableAutoSIPrefix(False)  # goodput reads 0.9, not "900 (x0.001)"
        # The bar's numbers in the output's words ("$1.2 M", "3.4 M"), and room for them beside its title.
        self.colour_ticks = _OutputTicks(self.colorbar.axis)
        self.colorbar.setImageItem(self.image, insert_in=self.heat_plot.getPlotItem())
        # the outer edges' labels are drawn though they reach past the plot's ends
        self.heat_plot.getPlotItem().getAxis("bottom").setStyle(hideOverlappingLabels=40)

    def _build_bars(self) -> None:
        self.bar_plot = pg.PlotWidget(self, plotItem=plot_item())
        self.bar_plot.setObjectName("studySobol")
        self.bar_plot.setMenuEnabled(False)
        self.bar_plot.setMouseEnabled(False, False)
        self.bar_plot.setTitle("Sobol indices of goodput")
        self.bar_plot.setLabel("bottom", "share of the variance")
        # Horizontal bars, largest total first (at the top), so the legend at the bottom right covers the least.
        self.legend = self.bar_plot.addLegend(offset=(-10, -10))

    def _built(self) -> None:
        self.ready = True
        if self._pending is not None:
            self.show_results(*self._pending)

    # -- loading -------------------------------------------------------------------------------------------
    def load(self, path: str | Path) -> None:
        """Read ``path`` in a compute process (:func:`planner_gui.core.session.jobs.study_load`: reading a large file
        on a thread of this interpreter stalled the window for seconds); the window shows it when it is read, or a
        dialog says why not."""
        p = Path(path)
        self.loading = True
        self.title.setText(f"Reading {fmt.clean(p.name, 80)}...")
        if self._jobs is None:
            self._jobs = JobRunner(self, self._read)
        self._jobs.run("study_load", str(p))

    def _read(self, _req: int, value: object) -> None:
        jobs, self._jobs = self._jobs, None
        if jobs is not None:
            QTimer.singleShot(0, jobs.shutdown)  # (not from within its own signal) its process ends: nothing more
        if isinstance(value, JobFailed):
            self._on_loaded(None, None, str(value))
        else:
            self._on_loaded(*cast(tuple[Any, Any, Any], value))

    def closeEvent(self, event: QCloseEvent) -> None:
        if self._jobs is not None:
            self._jobs.shutdown()
            self._jobs = None
        super().closeEvent(event)

    def _on_loaded(self, res: StudyResults | None, sobol: Any, error: str | None) -> None:
        if error is not None or res is None:
            self.loading = False
            QMessageBox.critical(self, "Open Study Results", error or "cannot read the study")
            self.close()
            return
        self.show_results(res, sobol)

    def show_results(self, res: StudyResults, sobol: SobolIndices | str | None) -> None:
        """Show a study's results (once the plots are built: until then ``loading`` stays on)."""
        if not self.ready:
            self._pending = (res, sobol)
            return
        self._pending = None
        self.loading = False
        self.results = res
        self.setWindowTitle(f"{fmt.clean(res.path.name, 60)} - {fmt.clean(res.name, 60)} - planner-gui")
        self.title.setText(
            f"<b>{fmt.clean(res.name, 100)}</b>: {res.rows:,} of {res.total:,} scenario{'s' if res.total != 1 else ''} "
            f"({res.design} over {len(res.inputs)} input{'s' if len(res.inputs) != 1 else ''}, "
            f"{int(res.meta['study']['trials']):,} trials each)"
            + (f"<br>{html.escape(fmt.clean(res.note, 300))}" if res.note else "")
        )
        # A study without inputs has nothing to draw a heatmap over: say so instead of empty axes.
        drawable = bool(res.inputs)
        for w in (self.heat_plot, self.pick_row):
            w.setVisible(drawable)
        self.no_heatmap.setVisible(not drawable)
        for box in (self.x_box, self.y_box, self.out_box):
            box.blockSignals(True)
            box.clear()
        self.x_box.addItems(res.inputs)
        self.y_box.addItems(res.inputs if len(res.inputs) > 1 else [NO_INPUT])
        numeric_outputs = drawable_outputs(res)
        self.out_box.addItems(numeric_outputs)
        if res.inputs:  # (the heatmap the compute process drew already: summary.prepare)
            x, y = first_axes(res)
            self.x_box.setCurrentText(x)
            self.y_box.setCurrentText(y)
        self._x_prev, self._y_prev = self.x_box.currentText(), self.y_box.currentText()
        if DEFAULT_OUTPUT in numeric_outputs:
            self.out_box.setCurrentText(DEFAULT_OUTPUT)
        for box in (self.x_box, self.y_box, self.out_box):
            box.blockSignals(False)
        if drawable:
            self._redraw_heatmap()
        else:
            self.heat = None
            self.no_heatmap.setText(
                f"This study varies no input, so there is no heatmap: its {res.rows:,} "
                f"scenario{'s' if res.rows != 1 else ''} differ only in their seeds."
            )
            self.cell_note.setText("")
        self._draw_sobol(sobol)

    # -- heatmap -------------------------------------------------------------------------------------------
    def choose(self, x: str, y: str, output: str | None = None) -> None:
        """Show ``output`` over inputs ``x`` (across) and ``y`` (up)."""
        self.x_box.setCurrentText(x)
        self.y_box.setCurrentText(y)
        if output is not None:
            self.out_box.setCurrentText(output)
        self._redraw_heatmap()

    def _axis_chosen(self, box: QComboBox) -> None:
        """Across and Up never show the same input: choosing the other's input swaps them."""
        other, prev = (self.y_box, "_x_prev") if box is self.x_box else (self.x_box, "_y_prev")
        now = box.currentText()
        if now and now == other.currentText():
            other.blockSignals(True)
            other.setCurrentText(getattr(self, prev))
            other.blockSignals(False)
        self._x_prev, self._y_prev = self.x_box.currentText(), self.y_box.currentText()
        self._redraw_heatmap()

    def _redraw_heatmap(self) -> None:
        res = self.results
        if res is None or not self.x_box.currentText() or not self.out_box.currentText():
            return
        x, y, out = self.x_box.currentText(), self.y_box.currentText(), self.out_box.currentText()
        h = study_heatmap(res, x, y, out)
        self.heat = h
        values = h.values
        lo, hi = colour_range(values, share=out.startswith("goodput"))
        self.image.setImage(values, autoLevels=False)
        self.image.setRect(0, 0, values.shape[1], values.shape[0])
        self.colour_ticks.form = number_format(out)
        self.colorbar.setLevels((lo, hi))
        self.colorbar.axis.setLabel(out)
        self._fit_colour_axis()
        plot = self.heat_plot.getPlotItem()
        plot.setLabel("bottom", x)
        plot.setLabel("left", "" if y == NO_INPUT else y)
        plot.getAxis("bottom").setTicks([h.x_ticks])
        plot.getAxis("left").setTicks([h.y_ticks])
        plot.setRange(xRange=(0, values.shape[1]), yRange=(0, values.shape[0]), padding=0)
        plot.setTitle(f"{out}: mean over the other inputs" if len(res.inputs) > 1 else out)
        empty = int((h.counts == 0).sum())
        per_cell = h.counts[h.counts > 0]
        if not per_cell.size:
            note = "no scenarios"
        else:
            few, many = int(per_cell.min()), int(per_cell.max())
            noun = "scenario" if many == 1 else "scenarios"
            note = f"{few:,} {noun} per cell" if few == many else f"{few:,} to {many:,} {noun} per cell"
        if empty:
            note += f"; {empty} cell{'s' if empty != 1 else ''} without a scenario left blank"
        self.cell_note.setText(note)

    def _fit_colour_axis(self) -> None:
        """Make the colour bar's axis as wide as its widest number plus its title, so they never overlap."""
        axis = self.colorbar.axis
        lo, hi = self.colorbar.levels()
        length = max(axis.size().height(), self.heat_plot.height() * 0.7, 100.0)
        # the ticks at this size and at twice it (a taller window shows finer ones)
        values = sorted({v for n in (length, 2 * length) for _, vs in axis.tickValues(lo, hi, n) for v in vs})
        font = axis.style["tickFont"] or axis.font()
        metrics = QFontMetricsF(font)
        widest = max((metrics.horizontalAdvance(t) for t in tick_strings(values, self.colour_ticks.form)), default=0.0)
        title = axis.label.boundingRect().height()
        axis.setWidth(
            math.ceil(widest + axis.style["tickTextOffset"][0] + max(0, axis.style["tickLength"]) + title) + 4
        )

    # -- Sobol indices -----------------------------------------------------------------------------------------
    def _draw_sobol(self, sobol: SobolIndices | str | None) -> None:
        for item in (*self.bars.values(), *self.whiskers.values()):
            self.bar_plot.removeItem(item)
        self.bars.clear()
        self.whiskers.clear()
        self.legend.clear()
        if not isinstance(sobol, SobolIndices):
            self.sobol = None
            self.sobol_note.setText(sobol or "")
            self.bar_plot.setVisible(False)
            return
        self.sobol = sobol
        self.bar_plot.setVisible(True)
        order = np.argsort(-sobol.st, kind="stable")
        d = len(order)
        self.sobol_order = [sobol.inputs[i] for i in order]
        ys = (d - 1 - np.arange(d)).astype(float)  # the first in order at the top
        thick = 0.38
        for k, (key, values, conf, color, shift) in enumerate(
            (
                ("first", sobol.s1[order], sobol.s1_conf[order], PALETTE[0], thick / 2),
                ("total", sobol.st[order], sobol.st_conf[order], PALETTE[1], -thick / 2),
            )
        ):
            bars = pg.BarGraphItem(
                x0=np.zeros(d), y=ys + shift, width=values, height=thick, brush=brush(color), pen=pen(color, 1)
            )
            bars.setZValue(k)
            self.bar_plot.addItem(bars)
            self.legend.addItem(bars, LEGEND[key])
            whisk = pg.ErrorBarItem(x=values, y=ys + shift, width=2 * conf, beam=thick / 3, pen=pen("#808080", 1))
            whisk.setZValue(2)
            self.bar_plot.addItem(whisk)
            self.bars[key], self.whiskers[key] = bars, whisk
        left = self.bar_plot.getAxis("left")
        metrics = QFontMetricsF(left.style["tickFont"] or left.font())
        names = [
            metrics.elidedText(fmt.clean(n, 200), Qt.TextElideMode.ElideMiddle, NAME_WIDTH) for n in self.sobol_order
        ]
        left.setTicks([list(zip(ys.tolist(), names, strict=True)), []])
        right = float(max(1.0, np.max(sobol.st + sobol.st_conf), np.max(sobol.s1 + sobol.s1_conf)))
        low = float(min(0.0, np.min(sobol.s1 - sobol.s1_conf), np.min(sobol.st - sobol.st_conf)))
        self.bar_plot.setRange(xRange=(low, right * 1.05), yRange=(-0.6, d - 0.4), padding=0)
        self.sobol_note.setText(
            f"Shares of the variance of {sobol.output} over the study's ranges ({sobol.base_samples:,} base samples); "
            "largest total first; whiskers: 95% bootstrap intervals. "
            "First-order: the input alone; total: with its interactions."
            + (f"<br><b>Caution: these indices are not reliable</b>: {sobol.caution}." if sobol.caution else "")
        )


class _OutputTicks:
    """Gives an axis tick labels in an output's words (``form``), without keeping its window alive."""

    def __init__(self, axis: pg.AxisItem) -> None:
        self.form: Callable[[float], str] = fmt.compact
        axis.tickStrings = self.strings

    def strings(self, values: list[float], scale: float, spacing: float) -> list[str]:
        return tick_strings(values, self.form)


def colour_range(values: np.ndarray, share: bool = False) -> tuple[float, float]:
    """The colour bar's range: the cells' least to largest; one value sits in the middle of a range 10 % wide."""
    finite = values[np.isfinite(values)]
    if not finite.size:
        return 0.0, 1.0
    lo, hi = float(finite.min()), float(finite.max())
    if hi <= lo:
        half = abs(lo) * 0.05 or 0.5
        lo, hi = lo - half, lo + half
        if share:  # goodput is a share: keep the bar within 0 to 1
            lo, hi = max(lo, 0.0), min(hi, 1.0)
    return lo, hi


def number_format(column: str) -> Callable[[float], str]:
    """How an output's values read: money for costs, compact numbers (3.4 M) for the rest."""
    if column.endswith("_usd"):
        return fmt.money
    return fmt.compact


def tick_strings(values: list[float], form: Callable[[float], str]) -> list[str]:
    """Tick labels in ``form`` (:func:`fmt.compact` or :func:`fmt.money`, three significant digits), with
    more digits in the same style when close ticks would otherwise repeat a label ("12.35 M", "12.4 M")."""
    texts = [form(v) for v in values]
    digits = 4
    while len(set(texts)) < len(set(values)) and digits <= 8:
        texts = [_more_digits(form, v, digits) for v in values]
        digits += 1
    return texts


def _more_digits(form: Callable[[float], str], v: float, digits: int) -> str:
    a = abs(v)
    text = f"{v:.{digits}g}"
    for div, suffix in ((1e9, " B"), (1e6, " M"), (1e3, " k")):
        if a >= div:
            text = f"{v / div:.{digits}g}{suffix}"
            break
    return "$" + text if form is fmt.money else text


def pick_study_file(parent: QWidget, folder: str) -> str:
    """Ask for a study's results file (empty: cancelled)."""
    path, _ = QFileDialog.getOpenFileName(
        parent, "Open study results", folder, "Study results (*.parquet *.csv);;All files (*)"
    )
    return path


def open_study(path: str | Path, parent: QWidget | None = None) -> StudyView:
    """Open a study's results in a window of their own."""
    view = StudyView(parent)
    view.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    view.load(path)
    view.show()
    return view
