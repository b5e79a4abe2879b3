"""Exports: plots as PNG or SVG with a caption of their inputs, results as CSV. Every file is written
atomically."""

from __future__ import annotations

import csv
import datetime as dt
import io
import os
import re
import tempfile
from pathlib import Path

import pyqtgraph as pg
from PySide6.QtCore import QRect, QRectF, QSize, Qt
from PySide6.QtGui import QColor, QFont, QFontMetrics, QImage, QPainter
from PySide6.QtSvg import QSvgGenerator

from .. import __version__
from ..core.model.scenario import Scenario
from ..core.session.plan import PREVIEW, PlanResult
from ..core.util import fmt
from ..core.util.userfiles import write_atomic

__all__ = ["caption_lines", "export_plots", "export_results", "results_csv"]

_SLUGS = {
    "interruptionsVsGpusPlot": "interruptions-vs-gpus",
    "goodputVsGpusPlot": "goodput-vs-gpus",
    "goodputVsIntervalPlot": "goodput-vs-interval",
    "componentsPlot": "components",
    "goodputHistogramPlot": "goodput-histogram",
    "timeBreakdownPlot": "time-breakdown",
}
#: PNG exports are drawn at this many pixels per screen pixel, fonts and legends included.
PNG_SCALE = 2


def _sibling(base: Path, slug: str) -> Path:
    return base.with_name(f"{base.stem}-{slug}{base.suffix}")


def caption_lines(res: PlanResult, current: Scenario) -> list[str]:
    """Three lines that say what an exported plot shows: the scenario, its key inputs, the headline results."""
    sc = res.request.scenario
    # A new name or new prices do not make the plot another scenario's: the caption keeps the name the window shows.
    same = sc.simulated() == current.simulated()
    name = current.name if same else sc.name
    how = "Daly's optimum" if sc.uses_optimal_interval else "fixed"
    run = res.main.scenario
    preview = " (preview)" if res.request.quality.name == PREVIEW.name else ""
    return [
        f"{fmt.clean(name, 100)} - planner-gui {__version__}, {dt.date.today().isoformat()}",
        f"{fmt.count(sc.gpus)} GPUs, {sc.days:g} days; interruptions per GPU: {fmt.every(sc.gpu_mtbf_hours)}; "
        f"planned {sc.planned_per_day:.3g}/day; checkpoint every {fmt.duration_min(res.main.interval_min)} ({how}), "
        f"blocking write {sc.checkpoint_write_s:g} s; detection {sc.detect_min:g} min, restart {sc.restart_min:g} min",
        f"{fmt.count(run.trials)} trials{preview}, seed {run.seed}: "
        f"goodput {fmt.percent(float(res.main.goodput.mean()))} "
        f"(exact {fmt.exact_percent(res.main.expected.goodput, why=res.main.no_closed_form)}), "
        f"{fmt.count(float(res.main.trials.unplanned.mean()), 1)} "
        f"unplanned interruptions",
    ]


def _paint(painter: QPainter, widget: pg.PlotWidget, caption: list[str]) -> None:
    """The plot's scene as on screen, then the caption under it (in widget pixels).

    The scene is rendered, not the widget: ``QWidget.render`` on a scaled painter scales twice on some
    platforms. Readouts under the mouse are hidden first: an export shows the data, not the pointer.
    """
    painter.fillRect(QRectF(0, 0, widget.width(), widget.height() + 1000), QColor(pg.getConfigOption("background")))
    hidden = [item for item in widget.scene().items() if getattr(item, "isReadout", False) and item.isVisible()]
    for item in hidden:
        item.setVisible(False)
    try:
        source = widget.mapToScene(widget.viewport().rect()).boundingRect()
        widget.scene().render(painter, QRectF(0, 0, widget.width(), widget.height()), source)
    finally:
        for item in hidden:
            item.setVisible(True)
    if not caption:
        return
    font = _caption_font()
    painter.setFont(font)
    painter.setPen(QColor(pg.getConfigOption("foreground")))
    metrics = QFontMetrics(font)
    top = widget.height() + 4
    for i, text in enumerate(caption):
        painter.drawText(
            QRectF(6, top + i * metrics.height(), widget.width() - 12, metrics.height()),
            int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter),
            text,
        )


def _caption_font() -> QFont:
    font = QFont()
    font.setPointSizeF(7.5)
    return font


def wrap_caption(lines: list[str], width: int) -> list[str]:
    """The caption's lines wrapped at spaces to ``width`` pixels of the caption font."""
    metrics = QFontMetrics(_caption_font())
    out: list[str] = []
    for line in lines:
        current = ""
        for word in line.split(" "):
            trial = f"{current} {word}" if current else word
            if current and metrics.horizontalAdvance(trial) > width:
                out.append(current)
                current = word
            else:
                current = trial
        out.append(current)
    return out


def _canvas_size(widget: pg.PlotWidget, caption: list[str]) -> QSize:
    extra = (QFontMetrics(_caption_font()).height() * len(caption) + 8) if caption else 0
    return QSize(widget.width(), widget.height() + extra)


def _render_png(widget: pg.PlotWidget, path: str, caption: list[str]) -> None:
    caption = wrap_caption(caption, widget.width() - 12)
    size = _canvas_size(widget, caption)
    image = QImage(size * PNG_SCALE, QImage.Format.Format_ARGB32)
    image.fill(QColor(pg.getConfigOption("background")))
    painter = QPainter(image)
    try:
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.setRenderHint(QPainter.RenderHint.TextAntialiasing)
        painter.scale(PNG_SCALE, PNG_SCALE)
        _paint(painter, widget, caption)
    finally:
        painter.end()
    if not image.save(path):  # the format follows the .png suffix
        raise OSError(f"{Path(path).name}: cannot write the image")


_GROUP = re.compile(r'(<g [^>]*?transform=")matrix\(([^)]*)\)("[^>]*>)(.*?)(</g>)', re.DOTALL)
_POINT = re.compile(r"(-?\d+(?:\.\d+)?(?:e[-+]?\d+)?),(-?\d+(?:\.\d+)?(?:e[-+]?\d+)?)")


def flatten_svg(text: str) -> str:
    """Apply each drawing group's transform to its paths' and polylines' points.

    Qt writes a curve in data coordinates under a group that scales them to pixels, with
    ``vector-effect="non-scaling-stroke"`` to keep its lines one pixel wide. Renderers without that
    SVG Tiny 1.2 feature (librsvg, many office suites) scale the stroke with the data: a line drawn in
    a plot whose y scale is 16 pixels per unit becomes a 16-pixel band. With the points in pixels and
    the transform gone, every renderer draws what the screen shows.
    """

    def flatten(m: re.Match[str]) -> str:
        body = m.group(4)
        if "<text" in body or "<rect" in body or "<image" in body:
            return m.group(0)  # only point lists are rewritten; anything else keeps its transform
        a, b, c, d, e, f = (float(v) for v in m.group(2).split(","))

        def point(p: re.Match[str]) -> str:
            x, y = float(p.group(1)), float(p.group(2))
            return f"{a * x + c * y + e:.6g},{b * x + d * y + f:.6g}"

        body = re.sub(
            r'( (?:d|points)=")([^"]*)(")', lambda q: q.group(1) + _POINT.sub(point, q.group(2)) + q.group(3), body
        )
        return f"{m.group(1)}matrix(1,0,0,1,0,0){m.group(3)}{body}{m.group(5)}"

    return _GROUP.sub(flatten, text)


def _render_svg(widget: pg.PlotWidget, path: str, caption: list[str]) -> None:
    """Vector export through Qt's SVG generator (pyqtgraph's own SVG exporter fails on the paths of
    current Qt releases). The generator gets the screen's resolution: at its default, text and markers
    (drawn at a fixed size in pixels) would be placed by another scale than the data."""
    caption = wrap_caption(caption, widget.width() - 12)
    size = _canvas_size(widget, caption)
    gen = QSvgGenerator()
    gen.setFileName(path)
    gen.setSize(size)
    gen.setViewBox(QRect(0, 0, size.width(), size.height()))
    gen.setResolution(widget.logicalDpiX())
    gen.setTitle(widget.getPlotItem().titleLabel.text)
    gen.setDescription(" | ".join(caption) or "planner-gui plot")
    painter = QPainter(gen)
    try:
        _paint(painter, widget, caption)
    finally:
        painter.end()
    svg = Path(path)
    svg.write_text(flatten_svg(svg.read_text(encoding="utf-8")), encoding="utf-8")


def export_plots(
    widgets: dict[str, pg.PlotWidget], base: str | os.PathLike[str], caption: list[str] | None = None
) -> list[Path]:
    """Write every plot beside ``base`` as ``<stem>-<plot><suffix>``; the suffix (.png or .svg) picks the format.

    Each image carries ``caption`` (a few lines on its inputs) under the plot. Each is rendered in a
    scratch folder, then written atomically beside ``base``.
    """
    base = Path(base)
    suffix = base.suffix.lower()
    if suffix not in (".png", ".svg"):
        raise ValueError(f"{fmt.clean(base.name)}: plots export as .png or .svg")
    render = _render_png if suffix == ".png" else _render_svg
    written = []
    with tempfile.TemporaryDirectory(prefix="planner-gui-export-") as scratch:
        for name, widget in widgets.items():
            target = _sibling(base, _SLUGS[name])
            tmp = os.path.join(scratch, f"plot{suffix}")
            render(widget, tmp, caption or [])
            if os.path.getsize(tmp) == 0:
                raise OSError(f"{fmt.clean(target.name)}: the exporter wrote nothing")
            # Bytes go through write_atomic: the same modes, checks and atomic rename as every other save.
            write_atomic(target, Path(tmp).read_bytes())
            written.append(target)
    return written


def results_csv(res: PlanResult) -> str:
    """Per-trial results of the current scenario as CSV text."""
    m = res.main
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    comps = [c.name for c in m.scenario.failure_components]  # (the correlated events, when on, last)
    keys = m.hours_keys  # today's five, and with spares the hours they add: every hour of the window
    w.writerow(
        [
            "trial",
            "unplanned_interruptions",
            "planned_interruptions",
            "goodput",
            *(f"hours_{k}" for k in keys),
            *(f"interruptions:{c}" for c in comps),
        ]
    )
    hours = m.hours_per_trial()
    for i in range(m.trials.unplanned.size):
        w.writerow(
            [
                i,
                int(m.trials.unplanned[i]),
                int(m.trials.planned[i]),
                repr(float(m.goodput[i])),
                *(repr(float(hours[k][i])) for k in keys),
                *(int(v) for v in m.trials.by_component[i]),
            ]
        )
    return out.getvalue()


def export_results(res: PlanResult, path: str | os.PathLike[str]) -> list[Path]:
    """Write per-trial results to ``path`` and both sweeps beside it (``-gpu-sweep``, ``-interval-sweep``)."""
    path = Path(path)
    targets = [
        (path, results_csv(res)),
        (_sibling(path, "gpu-sweep"), res.by_gpus.to_csv()),
        (_sibling(path, "interval-sweep"), res.by_interval.to_csv()),
    ]
    for target, text in targets:
        write_atomic(target, text)
    return [t for t, _ in targets]
