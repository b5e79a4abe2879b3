"""Runtime assets (package data, loaded with importlib.resources)."""

from __future__ import annotations

from functools import lru_cache
from importlib import resources

from PySide6.QtCore import QByteArray
from PySide6.QtGui import QIcon, QPixmap

__all__ = ["app_icon"]


@lru_cache(maxsize=1)
def app_icon() -> QIcon:
    """The application icon, rendered from the packaged SVG at the usual sizes."""
    data = resources.files("planner_gui").joinpath("resources/icon.svg").read_bytes()
    icon = QIcon()
    for size in (16, 24, 32, 48, 64, 128, 256):
        pix = QPixmap()
        pix.loadFromData(QByteArray(data), "SVG")
        icon.addPixmap(pix.scaled(size, size))
    return icon
