"""Build the one-folder bundle dist/planner-gui/ with PyInstaller, then print its size and its archive's.

Usage (from anywhere): ``python packaging/build.py [--max-mb 180] [--max-archive-mb 60]``. Exits non-zero if
the build fails, or the folder or its archive (``dist/planner-gui-<platform>.tar.zst``, or ``.zip`` where
there is no ``zstd``) is larger than its limit.

On Linux, after PyInstaller (each step prints what it saved):

* the libraries nothing in the bundle needs are removed: PyInstaller collects the dependencies of every
  library it finds, among them those of plugins the spec then drops (the GTK theme's cairo, pango, gio ...);
  a library is kept when an executable, a Python extension, a Qt plugin or a kept library names it
  (``DT_NEEDED``), or it is ``libpython``;
* ICU's data (``libicudata``, 32 MB, every locale's names, calendars, converters, dictionaries) is cut to
  what Qt asks ICU for: collation (QCollator, the file dialog's sorting) with its normalization and
  properties data, about 4 MB. Qt formats numbers and dates from its own locale data, and the app reads and
  writes only UTF-8. The new library is checked before it replaces the old one: collation in 11 locales
  (sort keys, numeric mode) and case mapping must equal those of the full data;
* symbol tables are stripped from the libraries, except the auditwheel-vendored ones.
"""

from __future__ import annotations

import argparse
import ctypes
import os
import re
import shutil
import struct
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from collections.abc import Callable
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
        if not _is_elf(path):
            continue
        subprocess.run([strip, "--strip-unneeded", str(path)], check=False, capture_output=True)
    return before - folder_size(dist)


def _is_elf(path: Path) -> bool:
    try:
        with path.open("rb") as fh:
            return fh.read(4) == b"\x7fELF"
    except OSError:
        return False


def _needed(path: Path, readelf: str) -> list[str]:
    out = subprocess.run([readelf, "-d", str(path)], capture_output=True, text=True, check=False).stdout
    return re.findall(r"\(NEEDED\)\s+Shared library: \[(.+?)\]", out)


def prune_unreachable_libraries(dist: Path) -> int:
    """Remove the shared libraries (``lib*.so*`` at the top of ``_internal/`` or in Qt's ``lib/``) that no
    executable, Python extension, Qt plugin or kept library needs. Returns the bytes saved."""
    readelf = shutil.which("readelf")
    if not sys.platform.startswith("linux") or readelf is None:
        return 0
    internal = dist / "_internal"
    qt_lib = internal / "PySide6" / "Qt" / "lib"
    elfs = [p for p in dist.rglob("*") if p.is_file() and not p.is_symlink() and _is_elf(p)]

    def removable(p: Path) -> bool:
        return p.parent in (internal, qt_lib) and p.name.startswith("lib") and not p.name.startswith("libpython")

    by_name: dict[str, Path] = {}
    for p in elfs:
        by_name.setdefault(p.name, p)
    seen: set[Path] = set()
    todo = [p for p in elfs if not removable(p)]
    while todo:
        p = todo.pop()
        if p in seen:
            continue
        seen.add(p)
        todo.extend(by_name[n] for n in _needed(p, readelf) if n in by_name)
    saved = 0
    for p in elfs:
        if removable(p) and p not in seen:
            saved += p.stat().st_size
            p.unlink()
    for link in [*internal.iterdir(), *qt_lib.iterdir()]:  # links to what went
        if link.is_symlink() and not link.exists():
            link.unlink()
    return saved


#: The ICU data items kept (paths inside the data, after its ``icudtNNl/``): collation and what it reads.
ICU_KEEP_DIRS = ("coll/",)
ICU_KEEP_FILES = ("root.res", "res_index.res", "pool.res", "likelySubtags.res", "metadata.res")
ICU_KEEP_SUFFIXES = (".nrm", ".icu")
ICU_DROP_FILES = ("unames.icu",)  # character names (296 kB), for u_charName only


def _icu_keep(name: str) -> bool:
    rel = name.split("/", 1)[1] if "/" in name else name
    if rel.startswith(ICU_KEEP_DIRS):
        return True
    if "/" in rel or rel in ICU_DROP_FILES:
        return False
    return rel in ICU_KEEP_FILES or rel.endswith(ICU_KEEP_SUFFIXES)


def icu_items(data: bytes) -> tuple[int, dict[str, bytes]]:
    """ICU's common data (a header, then a table of contents of names and offsets, then the items, each
    aligned to 16 bytes) as its header's length and its items by name."""
    header = struct.unpack_from("<H", data)[0]
    count = struct.unpack_from("<I", data, header)[0]
    entries = struct.unpack_from(f"<{2 * count}I", data, header + 4)
    names = [data[header + n : data.index(b"\0", header + n)].decode("ascii") for n in entries[0::2]]
    offsets = [header + o for o in entries[1::2]] + [len(data)]
    return header, {names[i]: data[offsets[i] : offsets[i + 1]] for i in range(count)}


def icu_pack(header: bytes, items: dict[str, bytes]) -> bytes:
    """The common data of ``items`` (sorted by name, as ICU's binary search of the table needs), after
    ``header``: what ICU's icupkg writes."""
    names = sorted(items)
    table = 4 + 8 * len(names)
    name_at, at = [], table
    for n in names:
        name_at.append(at)
        at += len(n) + 1
    at += -at % 16
    body, data_at = bytearray(), []
    for n in names:
        data_at.append(at + len(body))
        body += items[n] + b"\0" * (-len(items[n]) % 16)
    toc = struct.pack("<I", len(names)) + b"".join(struct.pack("<II", a, b) for a, b in zip(name_at, data_at))
    toc += b"".join(n.encode("ascii") + b"\0" for n in names)
    return header + toc + b"\0" * (at - len(toc)) + bytes(body)


_COLLATION_CHECK = """
import json
from PySide6.QtCore import QCollator, QLocale
words = ["apple", "Banana", "banana", "\u00c4pfel", "Zebra", "zoo", "\u00e9t\u00e9", "etre",
         "\u00d6konomie", "\u0131spanak", "\u0130stanbul", "\u00e7ay", "\u4e2d\u56fd", "\u65e5\u672c",
         "\ud55c\uad6d", "r\u00e9sum\u00e9", "resume", "x10", "x9", "\u00c5ngstr\u00f6m", "stra\u00dfe", "strasse",
         "\u00c6ble", "\u00f8l", "Run_100k.json", "run_16k.json", "a-b", "a_b", "ab"]
out = {}
for name in ["en_US", "de_DE", "sv_SE", "tr_TR", "da_DK", "fr_FR", "zh_CN", "ja_JP", "ko_KR", "es_ES", "C"]:
    c = QCollator(QLocale(name))
    out[name] = sorted(words, key=c.sortKey)
    c.setNumericMode(True)
    out[name + " numeric"] = sorted(words, key=c.sortKey)
    out[name + " upper"] = QLocale(name).toUpper("istanbul stra\u00dfe")
print(json.dumps(out))
"""


def icu_library(lib: Path, out: Path, keep: Callable[[str], bool] = _icu_keep) -> tuple[Path | None, str]:
    """Build in folder ``out`` an ICU data library like ``lib`` holding only the items ``keep`` takes; its path
    (None if it could not be built) and what it holds or why not."""
    cc = shutil.which("cc") or shutil.which("gcc")
    nm = shutil.which("nm")
    if cc is None or nm is None:
        return None, "cutting it needs a C compiler and nm"
    version = lib.name.rsplit(".", 1)[-1]
    symbol = f"icudt{version}_dat"
    listing = subprocess.run([nm, "-D", "-S", str(lib)], capture_output=True, text=True, check=False).stdout
    m = re.search(rf"^[0-9a-f]+ ([0-9a-f]+) R {symbol}$", listing, re.M)
    if m is None:
        return None, f"no {symbol} in {lib.name}"
    data = ctypes.string_at(ctypes.addressof(ctypes.c_char.in_dll(ctypes.CDLL(str(lib)), symbol)), int(m.group(1), 16))
    header, items = icu_items(data)
    kept = {n: d for n, d in items.items() if keep(n)}
    blob = out / "icudata.dat"
    blob.write_bytes(icu_pack(data[:header], kept))
    asm = out / "icudata.s"
    asm.write_text(
        f'.section .rodata\n.globl {symbol}\n.type {symbol}, @object\n.balign 16\n{symbol}:\n.incbin "{blob}"\n'
        f'.size {symbol}, .-{symbol}\n.section .note.GNU-stack,"",@progbits\n'
    )
    new = out / lib.name
    made = subprocess.run(
        [cc, "-shared", f"-Wl,-soname,{lib.name}", "-o", str(new), str(asm)], capture_output=True, text=True
    )
    if made.returncode != 0:
        return None, f"the library did not build: {made.stderr.strip()[:200]}"
    return new, f"{len(kept)} of {len(items)} items"


def collation(preload: Path | None) -> tuple[str, str]:
    """What Qt's collation and case mapping give in 11 locales (standard output, standard error), with ICU's
    data from the library ``preload`` (None: the installed one)."""
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    if preload is not None:
        env["LD_PRELOAD"] = str(preload)
    run = subprocess.run(
        [sys.executable, "-c", _COLLATION_CHECK], capture_output=True, text=True, env=env, check=False, timeout=120
    )
    return run.stdout, run.stderr


def cut_icu_data(dist: Path) -> tuple[int, str]:
    """Replace Qt's ICU data library with one holding only the collation data (see the module's text), once
    collation with it is shown to equal collation with the full data; the bytes saved, and what was done or why
    not."""
    libs = sorted((dist / "_internal" / "PySide6" / "Qt" / "lib").glob("libicudata.so.*"))
    if not sys.platform.startswith("linux") or not libs:
        return 0, ""
    lib = libs[0]
    with tempfile.TemporaryDirectory() as tmp:
        new, what = icu_library(lib, Path(tmp))
        if new is None:
            return 0, f"ICU's data kept whole ({what})"
        full = collation(lib)
        if not full[0] or collation(new) != full:
            return 0, "ICU's data kept whole (collation with the cut data differed from the full data's)"
        before = lib.stat().st_size
        shutil.copyfile(new, lib)
    return before - lib.stat().st_size, f"ICU's data cut to collation: {what}"


def write_archive(dist: Path) -> Path:
    """The folder as one archive beside it: ``.tar.zst`` (zstd -19) where ``zstd`` is on the PATH, else ``.zip``."""
    zstd = shutil.which("zstd")
    stem = dist.parent / f"{dist.name}-{sys.platform}"
    if zstd is not None:
        out = stem.with_suffix(".tar.zst")
        tar = stem.with_suffix(".tar")
        with tarfile.open(tar, "w") as tf:
            tf.add(dist, arcname=dist.name)
        subprocess.run([zstd, "-19", "-T0", "-q", "-f", "--rm", str(tar), "-o", str(out)], check=True)
        return out
    out = stem.with_suffix(".zip")
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as zf:
        for p in sorted(dist.rglob("*")):
            zf.write(p, p.relative_to(dist.parent))
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--max-mb", type=float, default=180.0)
    ap.add_argument("--max-archive-mb", type=float, default=60.0)
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
    saved = prune_unreachable_libraries(dist)
    if saved:
        print(f"build: removed the libraries nothing in the bundle needs, {saved / 1e6:.1f} MB saved")
    saved, what = cut_icu_data(dist)
    if what:
        print(f"build: {what}" + (f", {saved / 1e6:.1f} MB saved" if saved else ""))
    saved = strip_linux_libraries(dist)
    if saved:
        print(f"build: stripped symbol tables from the libraries, {saved / 1e6:.1f} MB saved")
    size_mb = folder_size(dist) / 1e6
    print(f"build: {dist} is {size_mb:.1f} MB (limit {args.max_mb:.0f} MB)")
    archive = write_archive(dist)
    archive_mb = archive.stat().st_size / 1e6
    print(f"build: {archive} is {archive_mb:.1f} MB (limit {args.max_archive_mb:.0f} MB)")
    ok = True
    if size_mb > args.max_mb:
        print(f"build: the bundle is over {args.max_mb:.0f} MB", file=sys.stderr)
        ok = False
    if archive_mb > args.max_archive_mb:
        print(f"build: the bundle's archive is over {args.max_archive_mb:.0f} MB", file=sys.stderr)
        ok = False
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
