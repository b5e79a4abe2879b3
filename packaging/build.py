"""Build the one-folder bundle dist/planner-gui/ with PyInstaller, then print its size.

Usage (from anywhere): ``python packaging/build.py [--max-mb 250]``. Exits non-zero if the build fails
or the bundle is larger than the limit.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def folder_size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file() and not p.is_symlink())


def strip_linux_libraries(dist: Path) -> int:
    """Strip symbol tables from the bundle's ELF libraries, except the auditwheel-vendored ones.

    Libraries under ``*.libs/`` (numpy.libs, scipy.libs) were rewritten by patchelf and break when
    stripped. Returns the bytes saved.
    """
    strip = shutil.which("strip")
    if not sys.platform.startswith("linux") or strip is None:
        return 0
    before = folder_size(dist)
    for path in dist.rglob("*.so*"):
        if path.is_symlink() or not path.is_file() or any(p.name.endswith(".libs") for p in path.parents):
            continue
        with path.open("rb") as fh:
            if fh.read(4) != b"\x7fELF":
                continue
        subprocess.run([strip, "--strip-unneeded", str(path)], check=False, capture_output=True)
    return before - folder_size(dist)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--max-mb", type=float, default=250.0)
    args = ap.parse_args()
    spec = ROOT / "packaging" / "planner-gui.spec"
    cmd = [
        sys.executable,
        "-m",
        "PyInstaller",
        str(spec),
        "--noconfirm",
        "--clean",
        "--log-level",
        "WARN",
        "--distpath",
        str(ROOT / "dist"),
        "--workpath",
        str(ROOT / "build" / "pyinstaller"),
    ]
    print("+", " ".join(cmd), flush=True)
    if subprocess.run(cmd, cwd=ROOT).returncode != 0:
        print("build: PyInstaller failed", file=sys.stderr)
        return 1
    dist = ROOT / "dist" / "planner-gui"
    saved = strip_linux_libraries(dist)
    if saved:
        print(f"build: stripped symbol tables from the libraries, {saved / 1e6:.1f} MB saved")
    size_mb = folder_size(dist) / 1e6
    print(f"build: {dist} is {size_mb:.1f} MB (limit {args.max_mb:.0f} MB)")
    if size_mb > args.max_mb:
        print(f"build: the bundle is over {args.max_mb:.0f} MB", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
