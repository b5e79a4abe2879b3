"""Build inputs and the app's start-up plumbing (the bundle itself is built and smoke-tested by .ci/run)."""

from __future__ import annotations

import configparser
import logging
import sys
import threading
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def test_icon_renderings_exist_and_match_their_formats():
    res = ROOT / "resources"
    assert (res / "planner-gui.svg").read_text().lstrip().startswith("<svg")
    assert (res / "planner-gui.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert (res / "planner-gui.ico").read_bytes()[:4] == b"\x00\x00\x01\x00"
    assert (res / "planner-gui.icns").read_bytes()[:4] == b"icns"
    for size in (16, 32, 48, 64, 128, 256, 512):
        assert (res / "png" / f"planner-gui-{size}.png").stat().st_size > 100
    packaged = ROOT / "planner_gui" / "resources" / "icon.svg"
    assert packaged.read_bytes() == (res / "planner-gui.svg").read_bytes()


def test_desktop_file_is_valid():
    cp = configparser.ConfigParser(interpolation=None)
    cp.optionxform = str
    cp.read(ROOT / "resources" / "planner-gui.desktop")
    entry = cp["Desktop Entry"]
    assert entry["Type"] == "Application" and entry["Exec"].startswith("planner-gui")
    assert entry["Icon"] == "planner-gui" and entry["Terminal"] == "false"
    assert entry["Categories"].endswith(";")


def test_spec_leaves_out_qtopengl_with_its_stand_in_and_excludes_other_bindings():
    spec = (ROOT / "packaging" / "planner-gui.spec").read_text()
    assert "PySide6.QtOpenGL" in _spec_excludes() and "PySide6.QtOpenGLWidgets" not in _spec_excludes()
    assert 'runtime_hooks=[str(ROOT / "packaging" / "rthook_qtopengl.py")]' in spec
    for name in ("PyQt5", "PyQt6", "PySide2", "tkinter"):
        assert f'"{name}"' in spec


STAND_IN = """
import runpy, sys
runpy.run_path(sys.argv[1])
sys.meta_path.insert(0, sys.meta_path.pop())  # the stand-in first: as in the bundle, where the module is absent
import numpy as np
import pyqtgraph as pg
from PySide6 import QtOpenGL
from PySide6.QtWidgets import QApplication
app = QApplication([])
assert type(QtOpenGL).__name__ == "_Absent", type(QtOpenGL)
try:
    QtOpenGL.QOpenGLBuffer
except AttributeError as exc:
    print("said:", exc)
w = pg.PlotWidget()
w.plot(np.arange(10.0), np.arange(10.0) ** 2)
w.resize(300, 200)
w.show()
app.processEvents()
image = w.grab().toImage()
print("drawn", image.width(), image.height())
"""


def test_without_qtopengl_the_stand_in_lets_pyqtgraph_draw(tmp_path):
    """The bundle has no PySide6.QtOpenGL: with the runtime hook's stand-in found first, pyqtgraph imports,
    draws a curve, and a use of the module says why it is not there."""
    import subprocess

    out = subprocess.run(
        [sys.executable, "-c", STAND_IN, str(ROOT / "packaging" / "rthook_qtopengl.py")],
        capture_output=True,
        text=True,
        env={**__import__("os").environ, "QT_QPA_PLATFORM": "offscreen"},
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    assert "said: PySide6.QtOpenGL.QOpenGLBuffer: OpenGL drawing is not part of the standalone app" in out.stdout
    assert "drawn 300 200" in out.stdout


def _build_module():
    import importlib.util

    spec = importlib.util.spec_from_file_location("planner_build", ROOT / "packaging" / "build.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_icu_data_packed_again_holds_the_items_it_was_given():
    build = _build_module()
    header = b"\x20\x00\xda\x27" + b"h" * 28
    items = {"icudt73l/coll/root.res": b"r" * 37, "icudt73l/a.res": b"", "icudt73l/nfc.nrm": b"n" * 16}
    data = build.icu_pack(header, items)
    size, back = build.icu_items(data)
    assert size == 32 and data[:32] == header
    assert list(back) == sorted(items)  # ICU searches the table by name
    for name, blob in items.items():
        assert back[name][: len(blob)] == blob and not back[name][len(blob) :].strip(b"\0")
    starts = [data.index(blob) for blob in (b"r" * 37, b"n" * 16)]
    assert all(at % 16 == 0 for at in starts)


def _icu_library_or_skip():
    import shutil

    libs = sorted((Path(__import__("PySide6").__file__).parent / "Qt" / "lib").glob("libicudata.so.*"))
    if not sys.platform.startswith("linux") or not libs or not (shutil.which("cc") or shutil.which("gcc")):
        pytest.skip("Qt's own ICU data and a C compiler (Linux wheels)")
    return libs[0]


def test_the_cut_icu_data_collates_as_the_full_data_and_an_empty_one_does_not(tmp_path):
    """The bundle's ICU data keeps collation: sort keys in 11 locales (numeric mode too) and case mapping
    equal those of the full data. The check can fail: with no data at all, collation falls back to code
    points and Qt says it could not create a collator."""
    build = _build_module()
    lib = _icu_library_or_skip()
    (tmp_path / "cut").mkdir()
    (tmp_path / "empty").mkdir()
    cut, what = build.icu_library(lib, tmp_path / "cut")
    empty, _ = build.icu_library(lib, tmp_path / "empty", keep=lambda name: False)
    assert cut is not None and empty is not None, what
    assert cut.stat().st_size < 0.2 * lib.stat().st_size
    full = build.collation(None)
    assert full[0] and "Could not create collator" not in full[1]
    assert build.collation(cut) == full
    nothing = build.collation(empty)
    assert nothing[0] != full[0] and "Could not create collator" in nothing[1]


def test_libraries_nothing_needs_are_removed_from_the_bundle(tmp_path):
    """A library that an extension needs (and what that one needs) stays; one that nothing names goes."""
    import shutil
    import subprocess

    build = _build_module()
    cc = shutil.which("cc") or shutil.which("gcc")
    if not sys.platform.startswith("linux") or cc is None or shutil.which("readelf") is None:
        pytest.skip("Linux with a C compiler and readelf")
    internal = tmp_path / "planner-gui" / "_internal"
    qt_lib = internal / "PySide6" / "Qt" / "lib"
    qt_lib.mkdir(parents=True)
    src = tmp_path / "f.c"
    src.write_text("int f(void) { return 1; }\n")

    def lib(path, *needs):
        links = ["-Wl,--no-as-needed"] + [f"-L{p.parent}" for p in needs] + [f"-l:{p.name}" for p in needs]
        subprocess.run(
            [cc, "-shared", "-fPIC", f"-Wl,-soname,{path.name}", "-o", str(path), str(src), *links], check=True
        )
        return path

    b = lib(internal / "libb.so.1")
    a = lib(qt_lib / "liba.so.6", b)
    orphan = lib(internal / "libgtk-orphan.so.0", b)
    python = lib(internal / "libpython3.11.so.1.0")
    ext = lib(internal / "mod.cpython-311-x86_64-linux-gnu.so", a)
    (internal / "libgtk-orphan.so").symlink_to(orphan.name)
    saved = build.prune_unreachable_libraries(tmp_path / "planner-gui")
    assert a.exists() and b.exists() and python.exists() and ext.exists()
    assert not orphan.exists() and not (internal / "libgtk-orphan.so").is_symlink()
    assert saved > 0


def test_app_icon_loads(qapp):
    from planner_gui.ui.resources import app_icon

    icon = app_icon()
    assert not icon.isNull() and icon.pixmap(64, 64).width() == 64


@pytest.fixture
def error_dialogs(qapp, monkeypatch, tmp_path):
    """The window's error hooks installed (and taken out after), with every dialog recorded, not shown."""
    from PySide6.QtWidgets import QMessageBox

    from planner_gui.ui.errors import install_error_dialogs

    opened: list[str] = []

    def critical(*a, **k):
        assert threading.current_thread() is threading.main_thread()  # never a dialog from a worker
        opened.append(a[2])

    monkeypatch.setattr(QMessageBox, "critical", critical)
    dialogs = install_error_dialogs(tmp_path / "planner-gui.log")
    yield dialogs, opened
    dialogs.uninstall()
    dialogs.deleteLater()


def test_an_error_on_the_window_thread_is_logged_and_shown_once(error_dialogs, qtbot, caplog):
    _, opened = error_dialogs
    try:
        raise RuntimeError("boom")
    except RuntimeError:
        with caplog.at_level(logging.ERROR, logger="planner_gui"):
            sys.excepthook(*sys.exc_info())
    qtbot.waitUntil(lambda: bool(opened), timeout=5_000)
    assert len(opened) == 1 and "RuntimeError: boom" in opened[0] and "planner-gui.log" in opened[0]
    assert "unexpected error" in caplog.text and "boom" in caplog.text and "Traceback" in caplog.text


def test_an_error_in_a_worker_thread_reaches_one_dialog_on_the_window_thread(error_dialogs, qtbot, caplog, monkeypatch):
    """A thread's uncaught error is logged with its traceback and shown by the window's thread (a dialog is
    never opened from a worker); those that arrive while the dialog is open are counted in one more."""
    import time

    from PySide6.QtWidgets import QApplication, QMessageBox

    dialogs, _ = error_dialogs
    opened: list[str] = []

    def critical(*a, **k):  # a modal dialog runs the event loop until it is closed: the others arrive meanwhile
        assert threading.current_thread() is threading.main_thread()
        opened.append(a[2].split("\n")[0])
        deadline = time.monotonic() + 5
        while len(opened) == 1 and dialogs.more < 2 and time.monotonic() < deadline:
            QApplication.processEvents()

    monkeypatch.setattr(QMessageBox, "critical", critical)

    def fail(n: int) -> None:
        raise ValueError(f"worker {n} failed")

    with caplog.at_level(logging.ERROR, logger="planner_gui"):
        workers = [threading.Thread(target=fail, args=(n,), name=f"w{n}") for n in range(3)]
        for t in workers:
            t.start()
        for t in workers:
            t.join()
        qtbot.waitUntil(lambda: len(opened) == 2, timeout=10_000)
    assert opened[0].startswith("ValueError: worker ") and opened[0].endswith(" failed")
    assert opened[1] == "2 more unexpected errors since; the log has each"
    assert caplog.text.count("unexpected error:") == 3 and all(f"worker {n} failed" in caplog.text for n in range(3))


def test_uninstalling_puts_back_the_hooks_that_were_in_force(qapp, tmp_path):
    import threading

    from planner_gui.ui.errors import install_error_dialogs

    before = (sys.excepthook, threading.excepthook)
    dialogs = install_error_dialogs(tmp_path / "x.log")
    assert (sys.excepthook, threading.excepthook) != before
    dialogs.uninstall()
    dialogs.deleteLater()
    assert (sys.excepthook, threading.excepthook) == before


@pytest.mark.parametrize("argv", [["_compute-server"]])
def test_compute_server_answers_over_pipes(argv):
    """The hidden server mode that the window (and the frozen bundle) start as a child process."""
    import subprocess

    from planner_gui.core.files.presets import load_preset
    from planner_gui.core.session.plan import FULL, PlanRequest
    from planner_gui.core.session.server import read_frame, write_frame

    with subprocess.Popen(
        [sys.executable, "-m", "planner_gui", *argv], stdin=subprocess.PIPE, stdout=subprocess.PIPE, cwd=ROOT
    ) as proc:
        sc = load_preset("llama3-405b").replace(trials=50)
        write_frame(proc.stdin, PlanRequest(sc, FULL, 1))
        kinds = []
        while True:
            kind, gen, payload = read_frame(proc.stdout)
            kinds.append(kind)
            if kind == "result":
                break
        assert gen == 1 and payload.main.scenario == sc and len(payload.by_gpus.x) == FULL.gpu_points
        write_frame(proc.stdin, "quit")
        assert read_frame(proc.stdout)[0] == "bye"
        assert proc.wait(30) == 0


def test_the_compute_server_runs_the_windows_package_whatever_the_folder(tmp_path, monkeypatch):
    """``python -m`` puts the working folder first on the path: a window started inside another clone of the
    repository must still compute with its own package, not the folder's."""
    from planner_gui.core.files.presets import load_preset
    from planner_gui.core.session.plan import FULL, PlanRequest
    from planner_gui.core.session.server import read_frame, write_frame
    from planner_gui.core.session.spawn import spawn

    shadow = tmp_path / "planner_gui"
    shadow.mkdir()
    (shadow / "__init__.py").write_text("raise SystemExit(7)  # another planner_gui\n", encoding="utf-8")
    (shadow / "__main__.py").write_text("raise SystemExit(7)\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    with spawn() as proc:
        assert proc.stdin is not None and proc.stdout is not None
        sc = load_preset("llama3-405b").replace(trials=20)
        write_frame(proc.stdin, PlanRequest(sc, FULL, 1))
        kind, payload = "asked", None
        while kind not in ("result", ""):
            try:
                kind, _, payload = read_frame(proc.stdout)
            except EOFError:  # the server exited (another package answered)
                kind = ""
        assert kind == "result" and payload.main.scenario == sc, f"the server exited with {proc.wait(10)}"
        write_frame(proc.stdin, "quit")
        assert read_frame(proc.stdout)[0] == "bye"
        assert proc.wait(30) == 0


def test_missing_window_libraries_are_named_with_their_packages():
    """Qt aborts naming the wrong library when X11 libraries are missing; the app finds the real ones."""
    from planner_gui.app import _debian_package, missing_libraries

    ldd = (
        "/x/libqxcb.so:\n\tlibQt6XcbQpa.so.6 => /x/libQt6XcbQpa.so.6 (0x1)\n"
        "\tlibxcb-icccm.so.4 => not found\n\tlibxcb-keysyms.so.1 => not found\n"
        "/x/libQt6XcbQpa.so.6:\n\tlibxcb-icccm.so.4 => not found\n\tlibc.so.6 => /lib/libc.so.6 (0x2)\n"
    )
    assert missing_libraries(ldd) == ["libxcb-icccm.so.4", "libxcb-keysyms.so.1"]
    assert [_debian_package(n) for n in ("libxcb-icccm.so.4", "libxkbcommon-x11.so.0", "libxcb-cursor.so.0")] == [
        "libxcb-icccm4",
        "libxkbcommon-x11-0",
        "libxcb-cursor0",
    ]


def _spec_excludes() -> list[str]:
    spec = (ROOT / "packaging" / "planner-gui.spec").read_text()
    block = spec[spec.index("excludes = [") : spec.index("\n]\n", spec.index("excludes = ["))]
    lines = [line.split("#", 1)[0] for line in block.splitlines()[1:]]
    return [name.strip().strip('"') for line in lines for name in line.split(",") if name.strip()]


def test_the_app_and_every_command_import_nothing_the_bundle_leaves_out():
    """The standalone app is built without the modules the spec excludes: importing the command line, the
    window, the compute server and every model must not need them (they may only be imported inside a
    function that the bundle documents as unavailable, e.g. Latin hypercube studies)."""
    import subprocess

    modules = [
        "planner_gui.cli.program",
        "planner_gui.core.session.server",
        "planner_gui.ui.main_window",
        "planner_gui.core.model",
        "planner_gui.core.theory.tiers",
        "planner_gui.core.sim.tiers_run",
        "planner_gui.core.analysis.strategies",
        "planner_gui.core.incidents",
        "planner_gui.core.study",
        "planner_gui.report",
    ]
    code = "import sys\n" + "".join(f"import {m}\n" for m in modules) + "print('\\n'.join(sys.modules))"
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env={**__import__("os").environ, "QT_QPA_PLATFORM": "offscreen"},
    )
    loaded = set(out.stdout.split())
    excludes = _spec_excludes()
    assert "scipy.stats" in excludes and "pyarrow" in excludes  # the parse found the list
    # pyqtgraph imports QtTest inside try/except and runs without it; QtOpenGL has the bundle's stand-in
    # (test_without_qtopengl_the_stand_in_lets_pyqtgraph_draw); hashlib falls back to its built-in digests
    # without OpenSSL's _hashlib.
    optional = {"PySide6.QtTest", "PySide6.QtOpenGL", "_hashlib"}
    bad = sorted(m for m in loaded - optional for x in excludes if m == x or m.startswith(x + "."))
    assert not bad, f"imported at start but left out of the bundle: {bad}"


def test_the_screenshot_script_writes_to_a_temporary_folder_unless_told(tmp_path):
    """It once overwrote docs/screenshot.png, a tracked file, by default."""
    import os
    import subprocess

    tracked = ROOT / "docs" / "screenshot.png"
    before = tracked.stat().st_mtime_ns
    out = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "screenshot.py"), "--width", "1100", "--height", "700"],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "QT_QPA_PLATFORM": "offscreen", "TMPDIR": str(tmp_path)},
    )
    assert out.returncode == 0, out.stderr
    written = Path(out.stdout.strip().splitlines()[-1])
    assert written.is_file() and written.stat().st_size > 10_000
    assert written.is_relative_to(tmp_path) and tracked.stat().st_mtime_ns == before
