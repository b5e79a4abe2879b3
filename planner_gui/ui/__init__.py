"""The desktop user interface (PySide6 + pyqtgraph). Everything Qt lives under this package."""

from .main_window import MainWindow

__all__ = ["MainWindow"]
