"""A report to share: one self-contained HTML file of a scenario's numbers, plots, inputs and sources.

Qt-free (an import-linter contract checks it): the command line (``planner-gui report``) and the window
(File > Export Report) both call :func:`render_report` with the results they have.
"""

from __future__ import annotations

from .document import MAX_COMPARED, SECTIONS, render_report
from .model_text import MODEL_HTML, SOURCES, defaults_html, sources_html

__all__ = ["MAX_COMPARED", "MODEL_HTML", "SECTIONS", "SOURCES", "defaults_html", "render_report", "sources_html"]
