"""Shared test setup: Qt runs offscreen, settings go to a temporary folder, and no test may leave a
computation thread running."""

from __future__ import annotations

import os

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
# As the app does (planner_gui/__init__.py), before any test module imports numpy: the same BLAS
# summation order as the command line and the compute process, so their numbers agree to the last bit.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")


#: Test modules that drive Qt (the window or its compute controller): marked ``gui``.
GUI_MODULES = {"test_gui", "test_views", "test_faults", "test_compute"}
#: Test modules that start subprocesses or search with hypothesis: marked ``slow``.
SLOW_MODULES = {"test_cli", "test_hostile", "test_invariants", "test_packaging"}


def pytest_collection_modifyitems(config, items):
    """Mark tests by module, so ``pytest -m "not gui and not slow"`` runs the compute core in seconds."""
    for item in items:
        module = item.module.__name__.rsplit(".", 1)[-1]
        if module in GUI_MODULES:
            item.add_marker(pytest.mark.gui)
        if module in SLOW_MODULES:
            item.add_marker(pytest.mark.slow)


@pytest.fixture
def isolated_settings(tmp_path, qapp):
    """QSettings in a fresh folder, so tests never read or write the user's."""
    from PySide6.QtCore import QSettings

    QSettings.setPath(QSettings.Format.NativeFormat, QSettings.Scope.UserScope, str(tmp_path / "settings"))
    QSettings.setPath(QSettings.Format.IniFormat, QSettings.Scope.UserScope, str(tmp_path / "settings"))
    qapp.setOrganizationName("planner-gui-tests")
    qapp.setApplicationName("planner-gui-tests")
    QSettings().clear()
    yield tmp_path / "settings"


@pytest.fixture
def no_dialogs(monkeypatch):
    """An unexpected modal dialog fails the test instead of hanging it; tests patch the ones they expect."""
    from PySide6.QtWidgets import QMessageBox

    def unexpected(*args, **kwargs):
        raise AssertionError(f"unexpected dialog: {args[1:3]}")

    for name in ("question", "critical", "warning", "information"):
        monkeypatch.setattr(QMessageBox, name, unexpected)


@pytest.fixture(autouse=True)
def _collect_on_the_main_thread():
    """Windows turn automatic garbage collection off (planner_gui.ui.collector; their timer collects while the
    event loop runs): collect after each test here, on the main thread, so later tests start clean."""
    yield
    import gc

    if not gc.isenabled():
        gc.collect()


@pytest.fixture
def make_window(qtbot, isolated_settings, no_dialogs):
    """Build main windows; each is closed at the end and its worker thread must have stopped."""
    from planner_gui.ui import MainWindow

    made = []

    def make(*args, wait: bool = True, **kwargs):
        win = MainWindow(*args, **kwargs)
        win.show()
        made.append(win)
        if wait:
            with qtbot.waitSignal(win.resultsShown, timeout=60_000):
                pass
        return win

    yield make
    for win in made:
        win._confirm_discard = lambda: True  # never prompt while tearing down
        win.close()
        assert not win.compute.alive, "a compute process or thread outlived its test"
        win.deleteLater()
    qtbot.wait(10)
