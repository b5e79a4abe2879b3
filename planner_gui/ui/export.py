"""Exports: plots as PNG or SVG, results as CSV. Every file is written atomically."""

from __future__ import annotations

import csv
import io
import os
import tempfile
from pathlib import Path

import pyqtgraph as pg
import pyqtgraph.exporters as pge
from PySide6.QtGui import QPainter
from PySide6.QtSvg import QSvgGenerator

from ..core.results import HOURS_KEYS
from ..core.scenario_io import write_atomic
from .compute import PlanResult

__all__ = ["export_plots", "export_results", "results_csv"]

_SLUGS = {
    "interruptionsVsGpusPlot": "interruptions-vs-gpus",
    "goodputVsGpusPlot": "goodput-vs-gpus",
    "goodputVsIntervalPlot": "goodput-vs-interval",
    "componentsPlot": "components",
    "goodputHistogramPlot": "goodput-histogram",
    "timeBreakdownPlot": "time-breakdown",
}


def _sibling(base: Path, slug: str) -> Path:
    return base.with_name(f"{base.stem}-{slug}{base.suffix}")


def _render_svg(widget: pg.PlotWidget, path: str) -> None:
    """Vector export through Qt's SVG generator (pyqtgraph's SVG exporter cannot parse the paths of
    current Qt releases)."""
    gen = QSvgGenerator()
    gen.setFileName(path)
    gen.setSize(widget.size())
    gen.setViewBox(widget.rect())
    gen.setTitle(widget.getPlotItem().titleLabel.text)
    gen.setDescription("planner-gui plot")
    painter = QPainter(gen)
    try:
        widget.render(painter)
    finally:
        painter.end()


def export_plots(widgets: dict[str, pg.PlotWidget], base: str | os.PathLike[str]) -> list[Path]:
    """Write every plot beside ``base`` as ``<stem>-<plot><suffix>``; the suffix (.png or .svg) picks the format."""
    base = Path(base)
    suffix = base.suffix.lower()
    if suffix not in (".png", ".svg"):
        raise ValueError(f"{base.name}: plots export as .png or .svg")
    written = []
    for name, widget in widgets.items():
        target = _sibling(base, _SLUGS[name])
        fd, tmp = tempfile.mkstemp(prefix=f".{target.stem}.", suffix=suffix, dir=target.parent)
        os.close(fd)
        try:
            if suffix == ".png":
                exporter = pge.ImageExporter(widget.getPlotItem())
                exporter.parameters()["width"] = max(800, int(widget.width() * 2))
                exporter.export(tmp)
            else:
                _render_svg(widget, tmp)
            if os.path.getsize(tmp) == 0:
                raise OSError(f"{target.name}: the exporter wrote nothing")
            os.replace(tmp, target)
        except BaseException:
            if os.path.exists(tmp):
                os.unlink(tmp)
            raise
        written.append(target)
    return written


def results_csv(res: PlanResult) -> str:
    """Per-trial results of the current scenario as CSV text."""
    m = res.main
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    comps = [c.name for c in m.scenario.components]
    w.writerow(["trial", "unplanned_interruptions", "planned_interruptions", "goodput",
                *(f"hours_{k}" for k in HOURS_KEYS), *(f"interruptions:{c}" for c in comps)])
    hours = m.hours_per_trial()
    for i in range(m.trials.unplanned.size):
        w.writerow([i, int(m.trials.unplanned[i]), int(m.trials.planned[i]), repr(float(m.goodput[i])),
                    *(repr(float(hours[k][i])) for k in HOURS_KEYS), *(int(v) for v in m.trials.by_component[i])])
    return out.getvalue()


def export_results(res: PlanResult, path: str | os.PathLike[str]) -> list[Path]:
    """Write per-trial results to ``path`` and both sweeps beside it (``-gpu-sweep``, ``-interval-sweep``)."""
    path = Path(path)
    targets = [(path, results_csv(res)),
               (_sibling(path, "gpu-sweep"), res.by_gpus.to_csv()),
               (_sibling(path, "interval-sweep"), res.by_interval.to_csv())]
    for target, text in targets:
        write_atomic(target, text)
    return [t for t, _ in targets]
