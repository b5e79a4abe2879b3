"""Render the main window offscreen to a PNG (default: screenshot.png in a new temporary folder; the path
is printed). Name docs/screenshot.png to refresh the README's picture.

Usage: ``python scripts/screenshot.py [OUT.png] [--preset NAME] [--width W --height H] [--baseline] [--tab N]``.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", nargs="?", default=None, help="the PNG to write (default: in a new temporary folder)")
    ap.add_argument("--preset", default="llama3-405b")
    ap.add_argument("--width", type=int, default=1600)
    ap.add_argument("--height", type=int, default=1000)
    ap.add_argument("--baseline", action="store_true", help="pin the preset, then show 100,000 GPUs over it")
    ap.add_argument("--dark", action="store_true", help="use a dark palette (Fusion style)")
    ap.add_argument("--expand", default="", help="expand this failure-rate category, e.g. GPU")
    ap.add_argument("--hover", default="", help="show the readout of this plot (objectName), as under the mouse")
    ap.add_argument("--tab", type=int, default=0, help="show this tab of the results (0: Reliability, 1: Planning)")
    args = ap.parse_args()
    if args.out is None:
        args.out = os.path.join(tempfile.mkdtemp(prefix="planner-gui-screenshot-"), "screenshot.png")

    from PySide6.QtCore import QCoreApplication, QEventLoop, QSettings, QTimer
    from PySide6.QtWidgets import QApplication

    QSettings.setPath(QSettings.Format.NativeFormat, QSettings.Scope.UserScope, tempfile.mkdtemp())
    app = QApplication(sys.argv[:1])
    app.setOrganizationName("planner-gui-screenshot")
    if args.dark:
        from PySide6.QtGui import QColor, QPalette

        app.setStyle("Fusion")
        pal = QPalette()
        for role, color in (
            (QPalette.ColorRole.Window, "#2b2b2b"),
            (QPalette.ColorRole.WindowText, "#e6e6e6"),
            (QPalette.ColorRole.Base, "#1e1e1e"),
            (QPalette.ColorRole.Text, "#e6e6e6"),
            (QPalette.ColorRole.Button, "#3a3a3a"),
            (QPalette.ColorRole.ButtonText, "#e6e6e6"),
            (QPalette.ColorRole.Mid, "#9a9a9a"),
            (QPalette.ColorRole.Highlight, "#4e79a7"),
        ):
            pal.setColor(role, QColor(color))
        app.setPalette(pal)
    from planner_gui.ui.theme import configure_pyqtgraph

    configure_pyqtgraph(app)
    from planner_gui.core.files.presets import load_preset
    from planner_gui.ui import MainWindow

    win = MainWindow(load_preset(args.preset), restore=False)
    win.resize(args.width, args.height)
    win.show()
    if args.expand:
        from superqt import QCollapsible

        box = win.findChild(QCollapsible, f"category:{args.expand}")
        if box is not None:
            box.expand(animate=False)

    def wait_for_results() -> None:
        loop = QEventLoop()
        win.resultsShown.connect(loop.quit)
        QTimer.singleShot(120_000, loop.quit)
        loop.exec()
        win.resultsShown.disconnect(loop.quit)

    wait_for_results()
    win.tabs.setCurrentIndex(args.tab)
    if args.hover:
        hover = win.plots.hovers[args.hover]
        vb = win.plots.plot(args.hover).getViewBox()
        (x0, x1), (y0, y1) = vb.viewRange()
        hover.show_at(x0 + 0.6 * (x1 - x0), y0 + 0.5 * (y1 - y0))
    if args.baseline:
        win.pin_baseline()
        win.inputs.update(gpus=100_000)
        wait_for_results()
        while not win.results_current():  # the preview first, then the full run
            wait_for_results()
    QCoreApplication.processEvents()
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    ok = win.grab().save(args.out)
    win.close()
    print(args.out if ok else "could not save the screenshot")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
