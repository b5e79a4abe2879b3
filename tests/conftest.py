"""Shared test setup: Qt runs offscreen, settings go to a temporary folder, and no test may leave a thread (a
timer thread too) or a window behind, nor a test module a process: :func:`_nothing_left_behind` fails the test
that does, :func:`_no_process_left_behind` the module."""

from __future__ import annotations

import os
import sys
import threading
import time

import psutil
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


#: How long a test's processes and threads may take to end after it, in seconds (generous: the check waits
#: for them, it does not time them).
LEFTOVER_GRACE_S = 20.0
#: Threads that live for the whole session once something starts them (not a test's): by name prefix.
SESSION_THREADS = (
    "asyncio_",  # the default executor of an event loop's run_in_executor (Dask's client), reused
    "Dask-Offload",  # distributed's one offload thread, a module-level executor
    "Profile",  # distributed's sampling profiler of its own event loop thread, per process
    "IO loop",  # distributed's shared event loop thread for synchronous clients
    "AsyncProcess",  # distributed's process watcher (ends with the process it watches)
    "QueueFeederThread",  # a multiprocessing queue's feeder (Dask's nanny), ends when its queue is collected
)


#: Processes that live for the whole session once something starts them (not a test's): by their command line.
SESSION_PROCESSES = (
    "multiprocessing.resource_tracker",  # one per interpreter, started by the first pool or shared memory
    "multiprocessing.forkserver",  # one per interpreter, started by the first forkserver pool
)


def _children() -> dict[int, psutil.Process]:
    return {p.pid: p for p in psutil.Process().children(recursive=True)}


def session_process(proc: psutil.Process) -> bool:
    """A process-wide helper of multiprocessing (see :data:`SESSION_PROCESSES`), not a test's."""
    try:
        line = " ".join(proc.cmdline())
    except psutil.Error:
        return True  # gone already
    return any(name in line for name in SESSION_PROCESSES)


def leftover_processes(children_before: set[int], grace: float = LEFTOVER_GRACE_S) -> list[str]:
    """Child processes of this one not among ``children_before`` (pids) and not multiprocessing's own helpers,
    alive ``grace`` seconds from now. They are killed (so that one bad test does not spoil the rest)."""
    kids = [p for pid, p in _children().items() if pid not in children_before and not session_process(p)]
    _, alive = psutil.wait_procs(kids, timeout=grace)
    found = []
    for proc in alive:
        try:
            found.append(f"process {proc.pid} ({' '.join(proc.cmdline())[:120]})")
            proc.kill()
        except psutil.Error:
            continue
    psutil.wait_procs(alive, timeout=5)
    return found


def leftover_threads(threads_before: set[threading.Thread], grace: float = LEFTOVER_GRACE_S) -> list[str]:
    """Threads not among ``threads_before`` (nor session-wide ones) still alive after ``grace`` seconds."""
    found = []
    deadline = time.monotonic() + grace
    for thread in set(threading.enumerate()) - threads_before:
        if thread is threading.current_thread() or thread.name.startswith(SESSION_THREADS):
            continue
        thread.join(timeout=max(0.0, deadline - time.monotonic()))
        if thread.is_alive():
            found.append(f"thread {thread.name!r}")
    return found


def _open_windows() -> list[str]:
    """Top-level Qt windows still shown (a test's windows are closed by the end of it)."""
    if "PySide6.QtWidgets" not in sys.modules:
        return []
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance()
    if app is None:
        return []
    return [f"window {w.objectName() or type(w).__name__}" for w in app.topLevelWidgets() if w.isVisible()]


@pytest.fixture(autouse=True)
def _nothing_left_behind(request):
    """Fail the test that leaves a thread or a shown window behind it (its processes: see the next)."""
    threads = set(threading.enumerate())
    yield
    left = leftover_threads(threads) + _open_windows()
    if left:
        pytest.fail(f"{request.node.nodeid} left running: {', '.join(left)}", pytrace=False)


@pytest.fixture(scope="module", autouse=True)
def _no_process_left_behind(request):
    """Fail the module whose tests (or fixtures) leave a process behind them: checked when the module ends, after
    its module-wide fixtures (a Dask cluster shared by its tests) have closed."""
    children = set(_children())
    yield
    left = leftover_processes(children)
    if left:
        pytest.fail(f"{request.node.nodeid} left running: {', '.join(left)}", pytrace=False)


@pytest.fixture(autouse=True)
def _collect_on_the_main_thread():
    """Windows turn automatic garbage collection off (planner_gui.ui.collector; their timer collects while the
    event loop runs): collect after each test here, on the main thread, so later tests start clean."""
    yield
    import gc

    if not gc.isenabled():
        gc.collect()


@pytest.fixture
def slide_alone(qtbot):
    """Move a window's slider (by its object name) ``steps`` positions and wait for fresh results; check that the
    scenario changed in the slider's field alone, to the value its box shows; return that value."""
    from PySide6.QtWidgets import QAbstractSlider

    def slide(win, name: str, field: str, steps: int):
        before = win.scenario()
        slider = win.findChild(QAbstractSlider, name)
        assert slider is not None, name
        slider.setValue(slider.value() + steps)
        qtbot.waitUntil(lambda: not win.compute.busy and win.results_current(), timeout=60_000)
        after = win.scenario()
        value = getattr(after, field)
        assert value == pytest.approx(win.controls.values[field].spin.value(), rel=1e-9), name
        assert value != getattr(before, field), name
        assert after.replace(name=before.name) == before.replace(**{field: value}), name
        return value

    return slide


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
