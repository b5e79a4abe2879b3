"""Text of the Help menu: the model and the source of every default (the same text as the report's)."""

from __future__ import annotations

from html import escape

from .. import __version__

__all__ = ["about_html", "model_html"]

#: What only the window has: its multipliers.
_WINDOW_NOTES = """\
<p><b>Failure-rate multipliers</b> are against reference rates: the Llama 3 rate for each of its 18 causes,
or, for a component of another name, its rate in the scenario as opened.</p>
"""


def model_html() -> str:
    from ..report.model_text import MODEL_HTML, defaults_html, sources_html  # (the report's modules: when asked for)

    return (
        f"<h2>The model</h2>{MODEL_HTML}{_WINDOW_NOTES}"
        f"<h2>Defaults</h2><ul>{defaults_html()}</ul><h2>Sources</h2><ul>{sources_html()}</ul>"
    )


def about_html() -> str:
    return (
        f"<h3>planner-gui {escape(__version__)}</h3>"
        "<p>A what-if planner for interruptions and goodput of large GPU training clusters.</p>"
        "<p>Monte Carlo beside the exact expectation; defaults from Meta's Llama 3 405B run.</p>"
    )
