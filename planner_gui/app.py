"""Start the desktop application: display check, logging, error dialog, main window.

Environment:

``PLANNER_GUI_QUIT_AFTER_START=1``
    Quit by itself once the first results are shown (used to smoke-test the built bundle).
"""

from __future__ import annotations

import logging
import logging.handlers
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from . import __version__

if TYPE_CHECKING:
    import subprocess

log = logging.getLogger("planner_gui")

QUIT_ENV = "PLANNER_GUI_QUIT_AFTER_START"
HEADLESS_HINT = "use 'planner-gui run --preset llama3-405b' for the command line"


def display_available() -> bool:
    """Whether Qt can open a window here (or has been told to draw offscreen)."""
    if os.environ.get("QT_QPA_PLATFORM"):
        return True
    if sys.platform in ("win32", "darwin"):
        return True
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


def _debian_package(library: str) -> str:
    """The Debian/Ubuntu package that ships a library: libxcb-icccm.so.4 -> libxcb-icccm4."""
    stem, _, version = library.partition(".so.")
    version = version.split(".")[0]
    return f"{stem}-{version}" if stem[-1:].isdigit() else f"{stem}{version}"


def missing_libraries(ldd_output: str) -> list[str]:
    """The libraries ``ldd`` says are not found, in order, once each."""
    names = [line.split("=>")[0].strip() for line in ldd_output.splitlines() if "not found" in line]
    return list(dict.fromkeys(n for n in names if n))


def missing_window_libraries() -> list[str]:
    """System libraries Qt's X11 window support needs and this machine lacks (Linux, X11 only).

    Without them Qt aborts with a message that names the wrong library; this finds the real ones
    before Qt starts, with ``ldd`` on its X11 plugin. Anywhere else, or if it cannot tell, [].
    """
    if (
        not sys.platform.startswith("linux")
        or os.environ.get("QT_QPA_PLATFORM", "xcb") != "xcb"
        or not os.environ.get("DISPLAY")
        or os.environ.get("WAYLAND_DISPLAY")
    ):
        return []
    import ctypes.util
    import shutil
    import subprocess

    try:
        import PySide6
    except ImportError:
        return []
    qt = Path(PySide6.__file__).parent / "Qt"
    targets = [p for p in (qt / "plugins" / "platforms" / "libqxcb.so", qt / "lib" / "libQt6XcbQpa.so.6") if p.exists()]
    ldd = shutil.which("ldd")
    if not targets or ldd is None:
        return []
    try:
        out = subprocess.run([ldd, *map(str, targets)], capture_output=True, text=True, timeout=10).stdout
    except (OSError, subprocess.SubprocessError):
        return []
    missing = missing_libraries(out)
    if ctypes.util.find_library("xcb-cursor") is None:  # loaded by Qt at run time, so ldd cannot see it
        missing.append("libxcb-cursor.so.0")
    return missing


def log_dir() -> Path:
    """The user's log directory for this app, created if missing: ``planner-gui/logs`` in the user's data
    folder (on Linux ``~/.local/share/planner-gui/logs``). Independent of the application's name, which
    is set after logging starts."""
    from PySide6.QtCore import QStandardPaths

    base = QStandardPaths.writableLocation(QStandardPaths.StandardLocation.GenericDataLocation)
    path = (Path(base) / "planner-gui" if base else Path.home() / ".planner-gui") / "logs"
    path.mkdir(parents=True, exist_ok=True)
    return path


def _setup_logging() -> Path | None:
    fmt = logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s")
    root = logging.getLogger()
    root.setLevel(logging.INFO)
    target = None
    try:
        target = log_dir() / "planner-gui.log"
        handler: logging.Handler = logging.handlers.RotatingFileHandler(
            target, maxBytes=2_000_000, backupCount=3, encoding="utf-8"
        )
        handler.setFormatter(fmt)
        root.addHandler(handler)
    except OSError as exc:  # a read-only home must not stop the app
        print(f"planner-gui: cannot write the log file ({exc})", file=sys.stderr)
    if sys.stderr is not None:  # None in a windowed frozen app
        console = logging.StreamHandler(sys.stderr)
        console.setFormatter(fmt)
        root.addHandler(console)
    return target


def _start_compute_early() -> subprocess.Popen[bytes] | None:
    """Start the compute process now, so it imports numpy and scipy (and computes the default preset)
    on the other core while this process builds the window; None if it cannot start (the window tries
    again, and says what is wrong)."""
    from .core.session.spawn import spawn

    try:
        return spawn()
    except OSError:
        return None


def _scenario_readable(path: str) -> bool:
    """Whether the scenario file ``path`` opens; if not, its one line on stderr."""
    from .core.files.scenario_io import ScenarioError, load
    from .core.util.fmt import ERROR_PREFIX

    try:
        load(path)
    except ScenarioError as exc:
        print(f"{ERROR_PREFIX}{exc}", file=sys.stderr)
        return False
    return True


def run_gui(scenario_path: str | None = None) -> int:
    """Open the main window; returns the process exit status."""
    if not display_available():
        print(f"planner-gui: no display available; {HEADLESS_HINT}", file=sys.stderr)
        return 2
    missing = missing_window_libraries()
    if missing:
        packages = " ".join(_debian_package(m) for m in missing)
        print(
            f"planner-gui: Qt cannot open a window here: missing system libraries {', '.join(missing)} "
            f"(on Debian or Ubuntu: apt-get install {packages}); {HEADLESS_HINT}",
            file=sys.stderr,
        )
        return 2
    if scenario_path and os.environ.get(QUIT_ENV) and not _scenario_readable(scenario_path):
        return 2  # unattended: the one line said why; no dialog would ever be answered (else the window's says it)
    early = _start_compute_early()
    log_file = _setup_logging()
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication

    from .ui.theme import configure_pyqtgraph

    existing = QApplication.instance()
    app = existing if isinstance(existing, QApplication) else QApplication(sys.argv[:1])
    app.setOrganizationName("planner-gui")
    app.setApplicationName("planner-gui")
    app.setApplicationVersion(__version__)
    configure_pyqtgraph(app)
    from .ui.errors import install_error_dialogs

    install_error_dialogs(log_file, app)  # uncaught errors on any thread: logged, and one dialog

    from .ui import MainWindow
    from .ui.compute import adopt_early_process
    from .ui.resources import app_icon

    if early is not None:
        adopt_early_process(early)

    app.setWindowIcon(app_icon())
    window = MainWindow()
    window.show()
    if scenario_path:  # (after show: a file that cannot be opened gets its dialog over the window)
        window.open_file(scenario_path, confirm=False)
    log.info("planner-gui %s started (Qt platform %s)", __version__, app.platformName())
    if os.environ.get(QUIT_ENV):

        def finish() -> None:
            log.info("init finished")
            window.close()

        window.resultsShown.connect(lambda: QTimer.singleShot(0, finish))
        QTimer.singleShot(60_000, app.quit)  # never hang a smoke test
    else:
        log.info("init finished")
    return int(app.exec())
