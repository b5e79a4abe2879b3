"""Render resources/planner-gui.svg to the PNG, ICO and ICNS files the bundles use.

Run from the repository root after editing the SVG: ``python packaging/make_icons.py``.
Also copies the SVG into the package (planner_gui/resources/icon.svg), which the running app loads.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

ROOT = Path(__file__).resolve().parent.parent
RES = ROOT / "resources"
SIZES = (16, 32, 48, 64, 128, 256, 512)


def main() -> int:
    from PySide6.QtCore import Qt
    from PySide6.QtGui import QGuiApplication, QImage, QPainter
    from PySide6.QtSvg import QSvgRenderer

    QGuiApplication(sys.argv[:1])
    svg = RES / "planner-gui.svg"
    renderer = QSvgRenderer(str(svg))
    if not renderer.isValid():
        print(f"{svg}: not a valid SVG", file=sys.stderr)
        return 1

    def render(size: int) -> QImage:
        img = QImage(size, size, QImage.Format.Format_ARGB32)
        img.fill(Qt.GlobalColor.transparent)
        p = QPainter(img)
        renderer.render(p)
        p.end()
        return img

    (RES / "png").mkdir(exist_ok=True)
    for size in SIZES:
        render(size).save(str(RES / "png" / f"planner-gui-{size}.png"))
    render(256).save(str(RES / "planner-gui.png"))
    for suffix, size in (("ico", 256), ("icns", 512)):
        if not render(size).save(str(RES / f"planner-gui.{suffix}"), suffix.upper()):
            print(f"could not write planner-gui.{suffix}", file=sys.stderr)
            return 1
    shutil.copyfile(svg, ROOT / "planner_gui" / "resources" / "icon.svg")
    print("wrote", ", ".join(sorted(p.name for p in RES.rglob("planner-gui*") if p.suffix != ".svg")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
