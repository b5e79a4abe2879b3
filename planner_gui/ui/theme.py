"""Plot settings shared by the app, the screenshot script and the GUI benchmark."""

from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtWidgets import QApplication

__all__ = ["configure_pyqtgraph"]


def configure_pyqtgraph(app: QApplication) -> None:
    """Plots follow the application palette (light or dark theme).

    Antialiasing stays off globally: in software rendering it roughly doubles the cost of a repaint;
    the few main curves turn it on for themselves.
    """
    palette = app.palette()
    pg.setConfigOptions(antialias=False, background=palette.window().color(),
                        foreground=palette.text().color())
