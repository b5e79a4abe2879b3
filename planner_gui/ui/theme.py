"""Colours and plot settings shared by the app, the screenshot script and the GUI benchmark."""

from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QApplication, QWidget

__all__ = ["MIN_CONTRAST", "configure_pyqtgraph", "contrast_ratio", "mark_secondary", "secondary_color"]

#: WCAG AA contrast for normal text.
MIN_CONTRAST = 4.5


def _luminance(c: QColor) -> float:
    def channel(v: float) -> float:
        return v / 12.92 if v <= 0.04045 else ((v + 0.055) / 1.055) ** 2.4

    return 0.2126 * channel(c.redF()) + 0.7152 * channel(c.greenF()) + 0.0722 * channel(c.blueF())


def contrast_ratio(a: QColor, b: QColor) -> float:
    """WCAG 2 contrast ratio of two colours (1 to 21)."""
    la, lb = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)


def _rgb(c: QColor) -> tuple[float, float, float]:
    return c.redF(), c.greenF(), c.blueF()


def secondary_color(palette: QPalette | None = None) -> QColor:
    """A muted text colour that still reads at :data:`MIN_CONTRAST` on the window background.

    It is the text colour blended towards the background, as far as the contrast allows (palette(mid)
    on a light theme is about 1.7:1).
    """
    palette = palette or QApplication.palette()
    text, back = palette.color(QPalette.ColorRole.WindowText), palette.color(QPalette.ColorRole.Window)
    for share in (0.45, 0.4, 0.35, 0.3, 0.25, 0.2, 0.15, 0.1, 0.05, 0.0):  # share of the background
        mix = [t * (1 - share) + b * share for t, b in zip(_rgb(text), _rgb(back))]
        c = QColor.fromRgbF(mix[0], mix[1], mix[2])
        if contrast_ratio(c, back) >= MIN_CONTRAST + 0.1:
            return c
    return text


def mark_secondary(widget: QWidget) -> None:
    """Show a label's text in the secondary colour (and keep it readable)."""
    widget.setProperty("secondary", True)
    pal = widget.palette()
    pal.setColor(QPalette.ColorRole.WindowText, secondary_color(QApplication.palette()))
    widget.setPalette(pal)


def configure_pyqtgraph(app: QApplication) -> None:
    """Plots follow the application palette (light or dark theme).

    Antialiasing stays off globally: in software rendering it roughly doubles the cost of a repaint;
    the few main curves turn it on for themselves.
    """
    palette = app.palette()
    pg.setConfigOptions(antialias=False, background=palette.window().color(), foreground=palette.text().color())
