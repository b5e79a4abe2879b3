"""The window's compute controller and its compute process, driven headless without a window.

Stalls are measured by a 5 ms timer on the GUI thread: a gap between its ticks is time the GUI thread
could not paint. On Linux the time the thread spent ready to run but waiting for a CPU (the scheduler's
run-queue delay, /proc/thread-self/schedstat) is subtracted: on a loaded shared machine other processes
can delay any thread by tens of milliseconds, and that is not the controller's doing. Time the GUI
thread spends blocked (on a pipe, a process, a lock or the GIL) is never subtracted.
"""

from __future__ import annotations

import gc
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest
from PySide6.QtCore import QObject, Qt, QThread, QTimer

from planner_gui.core.files.presets import load_preset
from planner_gui.core.session.plan import PREVIEW, PlanRequest
from planner_gui.core.session.server import read_frame, write_frame
from planner_gui.ui.compute import FULL, ComputeController

ROOT = Path(__file__).resolve().parent.parent
#: The longest the GUI thread may go without running its event loop.
MAX_STALL_S = 0.100
#: Generous: CI runs on a shared 2-core machine, and a fresh compute process imports numpy and scipy.
RESULT_TIMEOUT_MS = 60_000
#: Today's stall is 10 s; half a megabyte of requests into a stopped process is plenty to fill its pipe.
PADDING = "x" * 50_000

needs_sigstop = pytest.mark.skipif(not hasattr(signal, "SIGSTOP"), reason="needs POSIX signals")


def run_queue_wait_s() -> float:
    """Seconds the calling thread has waited for a CPU while ready to run; 0.0 where unknown."""
    return _thread_times()[1]


def _thread_times() -> tuple[float, float]:
    """Seconds the calling thread has run on a CPU and waited for one (/proc/thread-self/schedstat); zeros
    where unknown."""
    try:
        with open("/proc/thread-self/schedstat") as f:
            ran, waited = f.read().split()[:2]
        return int(ran) / 1e9, int(waited) / 1e9
    except (OSError, ValueError):
        return 0.0, 0.0


_TICK_S = 1.0 / os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 0.01


def steal_s() -> list[float]:
    """Seconds each CPU has lost to the hypervisor (the steal column of /proc/stat); empty where unknown."""
    try:
        with open("/proc/stat") as f:
            lines = [line.split() for line in f if line.startswith("cpu") and not line.startswith("cpu ")]
        return [int(cols[8]) * _TICK_S for cols in lines]
    except (OSError, IndexError, ValueError):
        return []


class StallMeter:
    """Ticks every 5 ms on the GUI thread and records the longest gap between ticks, two ways.

    ``longest``: the longest gap less what the machine took from the GUI thread, its run-queue delay
    (see the module docstring) and the time the hypervisor stole (on a shared virtual machine a vCPU
    can lose tens of milliseconds; /proc/stat counts it per CPU in 10 ms ticks, and the busiest CPU's
    count is taken). ``longest_raw`` is the longest gap as measured.

    ``blocked``: the longest time the GUI thread was kept from running by anything but the machine, on a
    pipe, a process, a lock or the interpreter lock: a gap less the time the thread ran, its run-queue
    delay and the steal. It leaves out the thread's own work (painting, mostly), whose speed depends on
    the machine and is measured by benchmarks/bench_gui.py.

    ``worst`` breaks down the gap behind ``longest``: how long the GUI thread ran, waited for a CPU and
    collected garbage (the collector runs on the GUI thread), and the steal.
    """

    def __init__(self) -> None:
        self._timer = QTimer()
        self._timer.setTimerType(Qt.TimerType.PreciseTimer)
        self._timer.setInterval(5)
        self._timer.timeout.connect(self._tick)
        self._gc_s = self._gc_started = 0.0
        self._last = self._sample()
        self.longest = self.longest_raw = self.blocked = 0.0
        self.worst: dict[str, float] = {}
        self.ticks = 0

    def _sample(self) -> tuple[float, float, float, list[float], float]:
        ran, waited = _thread_times()
        return time.perf_counter(), ran, waited, steal_s(), self._gc_s

    def _on_gc(self, phase: str, info: dict) -> None:
        if threading.current_thread() is not threading.main_thread():
            return
        if phase == "start":
            self._gc_started = time.perf_counter()
        else:
            self._gc_s += time.perf_counter() - self._gc_started

    def _tick(self) -> None:
        now = self._sample()
        gap, ran, waited = now[0] - self._last[0], now[1] - self._last[1], now[2] - self._last[2]
        stolen = max((b - a for a, b in zip(self._last[3], now[3], strict=False)), default=0.0)
        self.longest_raw = max(self.longest_raw, gap)
        net = gap - waited - min(stolen, gap - waited)
        if net > self.longest:
            self.longest = net
            self.worst = {"gap": gap, "ran": ran, "waited": waited, "gc": now[4] - self._last[4], "stolen": stolen}
        idle = gap - ran - waited  # with steal accounting, time stolen while running is here, not in ``ran``
        self.blocked = max(self.blocked, idle - min(stolen, max(idle, 0.0)))
        self._last = now
        self.ticks += 1

    def __enter__(self) -> StallMeter:
        gc.callbacks.append(self._on_gc)
        self._last = self._sample()
        self._timer.start()
        return self

    def __exit__(self, *exc) -> None:
        self._tick()  # the time since the last tick counts too
        self._timer.stop()
        gc.callbacks.remove(self._on_gc)

    def __str__(self) -> str:
        parts = ", ".join(f"{k} {v * 1000:.1f}" for k, v in self.worst.items())
        return (
            f"{self.longest * 1000:.1f} ms (longest gap {self.longest_raw * 1000:.1f} ms; the worst in ms: {parts}); "
            f"longest blocked {self.blocked * 1000:.1f} ms"
        )


class Recorder(QObject):
    """Everything a controller emits, and whether each signal arrived on the GUI thread."""

    def __init__(self, controller: ComputeController) -> None:
        super().__init__()
        self.results, self.gave_up, self.failed = [], [], []
        self.off_gui_thread = 0
        controller.resultReady.connect(lambda r: self._add(self.results, r))
        controller.gaveUp.connect(lambda m: self._add(self.gave_up, m))
        controller.failed.connect(lambda m: self._add(self.failed, m))

    def _add(self, into: list, item: object) -> None:
        self.off_gui_thread += QThread.currentThread() is not self.thread()
        into.append(item)


@pytest.fixture
def controller(qapp):
    c = ComputeController()
    yield c
    stopped = c.shutdown()
    assert stopped and not c.alive, "a compute process or thread outlived its test"
    c.deleteLater()


@pytest.fixture
def base():
    return load_preset("llama3-405b").replace(trials=200)


def wait_for_newest(qtbot, c: ComputeController, rec: Recorder):
    """Wait until the result of the newest request has arrived; return it."""
    qtbot.waitUntil(
        lambda: bool(rec.results) and rec.results[-1].request.generation == c.generation, timeout=RESULT_TIMEOUT_MS
    )
    assert not c.busy
    return rec.results[-1]


def wait_for_process(qtbot, c: ComputeController) -> subprocess.Popen:
    """The current compute process, once started (it starts on another thread)."""
    qtbot.waitUntil(lambda: c._process is not None, timeout=RESULT_TIMEOUT_MS)
    return c._process


def kill_and_wait_for_replacement(qtbot, c: ComputeController) -> None:
    dead = wait_for_process(qtbot, c)
    dead.kill()
    qtbot.waitUntil(lambda: c._process not in (None, dead), timeout=RESULT_TIMEOUT_MS)


def resume_later(proc: subprocess.Popen, seconds: float) -> threading.Timer:
    """SIGCONT ``proc`` after ``seconds`` from another thread, so code that blocks on a stopped process
    fails its test instead of hanging it. Popen.send_signal does nothing once the process is reaped."""
    waker = threading.Timer(seconds, proc.send_signal, (signal.SIGCONT,))
    waker.start()
    return waker


def test_the_stall_meter_tells_a_blocked_gui_thread_from_a_busy_one(qtbot):
    def busy(seconds: float) -> None:
        end = time.perf_counter() + seconds
        while time.perf_counter() < end:
            pass

    with StallMeter() as blocked:
        QTimer.singleShot(20, lambda: time.sleep(0.2))
        qtbot.wait(300)
    with StallMeter() as working:
        QTimer.singleShot(20, lambda: busy(0.2))
        qtbot.wait(300)
    # The sleep's gap is at least 0.2 s, and the meter takes from it the time the thread ran (the sleep call
    # and the tick, microseconds), waited for a CPU after it woke, and lost to the hypervisor.
    # (Time the hypervisor reports stolen while the thread slept is taken off too, by the meter's definition of
    # ``longest``: the raw gap holds the whole sleep, the net one all of it but what was taken.)
    taken = blocked.worst["ran"] + blocked.worst["waited"] + blocked.worst["stolen"]
    assert blocked.longest_raw >= 0.2 and blocked.longest >= 0.2 - taken, str(blocked)
    assert blocked.blocked >= 0.2 - taken and taken < 0.1, str(blocked)
    assert working.longest_raw >= 0.2 and working.blocked < 0.1, str(working)


def test_results_arrive_on_the_gui_thread_and_only_the_newest(controller, qtbot, base):
    rec = Recorder(controller)
    gens = [controller.submit(base.replace(detect_min=m), FULL) for m in (1.0, 2.0, 3.0)]
    assert gens == sorted(gens) and controller.busy
    res = wait_for_newest(qtbot, controller, rec)
    assert res.main.scenario.detect_min == 3.0
    assert [r.request.generation for r in rec.results] == [gens[-1]]  # the two older ones were dropped
    assert rec.off_gui_thread == 0


def test_a_full_runs_main_run_comes_ahead_of_its_result_and_is_its_main_run(controller, qtbot, base):
    """The window draws the main run's plots from the part while the sweeps are computed: the part must come first,
    on the GUI thread, for the newest request only, and hold the very numbers of the result's main run. A preview
    comes whole."""
    rec = Recorder(controller)
    parts: list = []
    controller.partReady.connect(lambda p: rec._add(parts, p))
    gens = [controller.submit(base.replace(detect_min=m), FULL) for m in (1.0, 4.0)]
    res = wait_for_newest(qtbot, controller, rec)
    assert [p.request.generation for p in parts] == [gens[-1]]  # (the older request's part, if sent, was dropped)
    part = parts[0]
    assert part.request == res.request and part.main.scenario == res.main.scenario
    assert part.stamps["sent"] <= part.stamps["delivered"] <= res.stamps["delivered"]
    for name in ("unplanned", "useful"):
        np.testing.assert_array_equal(getattr(part.main.trials, name), getattr(res.main.trials, name))
    controller.submit(base.replace(detect_min=9.0), PREVIEW)
    assert wait_for_newest(qtbot, controller, rec).request.quality == PREVIEW
    assert len(parts) == 1
    assert rec.off_gui_thread == 0


def test_repeated_deaths_spread_over_a_session_never_give_up(controller, qtbot, base, monkeypatch):
    now = [0.0]
    monkeypatch.setattr(controller, "_clock", lambda: now[0])
    rec = Recorder(controller)
    controller.submit(base)
    wait_for_newest(qtbot, controller, rec)
    with StallMeter() as meter:
        for i in range(2 * ComputeController.MAX_DEATHS + 2):
            controller.submit(base.replace(detect_min=1.0 + i))
            kill_and_wait_for_replacement(qtbot, controller)  # mid-request: it must be sent again
            res = wait_for_newest(qtbot, controller, rec)
            assert res.main.scenario.detect_min == 1.0 + i
            now[0] += ComputeController.DEATH_WINDOW_S + 1
    print(f"\nlongest GUI stall while killing the compute process: {meter}")
    assert meter.ticks > 10 and meter.longest < MAX_STALL_S
    assert rec.gave_up == [] and rec.failed == [] and not controller.gave_up


def test_rapid_deaths_give_up_and_restart_recovers(controller, qtbot, base, monkeypatch):
    monkeypatch.setattr(controller, "_clock", lambda: 100.0)  # every death at once
    rec = Recorder(controller)
    controller.submit(base)
    wait_for_newest(qtbot, controller, rec)
    with StallMeter() as meter:
        for _ in range(ComputeController.MAX_DEATHS):
            kill_and_wait_for_replacement(qtbot, controller)
        controller.submit(base.replace(detect_min=2.0))
        last = wait_for_process(qtbot, controller)
        with qtbot.waitSignal(controller.gaveUp, timeout=RESULT_TIMEOUT_MS) as gave_up:
            last.kill()
    assert meter.longest < MAX_STALL_S
    message = gave_up.args[0]
    assert message and "\n" not in message
    assert controller.gave_up and not controller.busy and controller._process is None
    qtbot.waitUntil(lambda: not controller.alive, timeout=RESULT_TIMEOUT_MS)  # nothing left running

    # An edit while given up does not pretend to compute: it says so again.
    with qtbot.waitSignal(controller.gaveUp, timeout=1000):
        gen = controller.submit(base.replace(detect_min=4.0))
    assert gen == controller.generation and not controller.busy and rec.failed == []

    controller.restart()
    assert controller.busy and not controller.gave_up and controller.alive
    assert wait_for_newest(qtbot, controller, rec).main.scenario.detect_min == 4.0
    kill_and_wait_for_replacement(qtbot, controller)  # the count starts afresh after a restart
    assert not controller.gave_up and controller._process.poll() is None


def test_a_compute_process_that_cannot_start_gives_up_at_once(controller, qtbot, base, monkeypatch):
    rec = Recorder(controller)
    monkeypatch.setattr("planner_gui.ui.compute.server_command", lambda: [str(ROOT / "no-such-program")])
    with qtbot.waitSignal(controller.gaveUp, timeout=RESULT_TIMEOUT_MS) as gave_up:
        controller.restart()
        controller.submit(base)
    assert gave_up.args[0].startswith("Cannot start the compute process") and not controller.busy
    monkeypatch.undo()
    controller.restart()
    assert wait_for_newest(qtbot, controller, rec).main.scenario == base


@needs_sigstop
def test_a_stopped_compute_process_never_blocks_the_gui_thread(controller, qtbot, base):
    rec = Recorder(controller)
    controller.submit(base)
    wait_for_newest(qtbot, controller, rec)
    proc = controller._process
    proc.send_signal(signal.SIGSTOP)
    waker = resume_later(proc, 1.5)
    sent = 0
    try:
        with StallMeter() as meter:
            while waker.is_alive():  # edit for as long as the process is stopped
                controller.submit(base.replace(name=f"{PADDING}{sent}", detect_min=1.0 + sent % 7), PREVIEW)
                sent += 1
                qtbot.wait(2)  # pace the edits like a fast drag, and let the timer tick
            res = wait_for_newest(qtbot, controller, rec)
    finally:
        waker.cancel()
        proc.send_signal(signal.SIGCONT)
    print(
        f"\nlongest GUI stall with the compute process stopped: {meter} ({sent} requests of {len(PADDING) // 1000} kB)"
    )
    assert meter.longest < MAX_STALL_S
    assert sent * len(PADDING) > 1_000_000  # far more than a pipe holds
    assert res.main.scenario.name == f"{PADDING}{sent - 1}" and res.request.quality == PREVIEW
    assert controller._process is proc  # stopped is not dead


@needs_sigstop
@pytest.mark.parametrize("fill_pipe", [False, True], ids=["idle", "pipe-full"])
def test_shutdown_with_a_stopped_compute_process_is_quick(qtbot, base, fill_pipe):
    c = ComputeController()
    rec = Recorder(c)
    c.submit(base)
    wait_for_newest(qtbot, c, rec)
    proc = c._process
    proc.send_signal(signal.SIGSTOP)
    waker = resume_later(proc, 5.0)
    try:
        t0, rq0 = time.perf_counter(), run_queue_wait_s()
        for i in range(40 if fill_pipe else 1):
            c.submit(base.replace(name=f"{PADDING}{i}"))
        submitting = time.perf_counter() - t0 - (run_queue_wait_s() - rq0)
        t0 = time.perf_counter()
        stopped = c.shutdown()
        closing = time.perf_counter() - t0
    finally:
        waker.cancel()
    print(
        f"\nshutdown with a stopped compute process ({'pipe full' if fill_pipe else 'idle'}): {closing * 1000:.0f} ms"
    )
    assert submitting < MAX_STALL_S
    assert closing < 1.0
    assert stopped and not c.alive and proc.returncode == -signal.SIGKILL and not c.busy
    c.deleteLater()


def test_shutdown_lets_an_idle_process_quit_by_itself(qtbot, base):
    c = ComputeController()
    rec = Recorder(c)
    c.submit(base)
    wait_for_newest(qtbot, c, rec)
    proc = c._process
    assert c.shutdown(timeout_s=30.0)  # long enough that it is never killed, even on a loaded machine
    assert proc.returncode == 0 and not c.alive
    assert c.submit(base) == c.generation and not c.busy  # closed: nothing more is sent
    c.deleteLater()


def test_cancel_drops_the_running_request(controller, qtbot, base):
    rec = Recorder(controller)
    controller.submit(base.replace(gpus=1_000_000, days=365.0, trials=2000))
    with qtbot.waitSignal(controller.progress, timeout=RESULT_TIMEOUT_MS):
        pass  # the long run has started
    with qtbot.waitSignal(controller.cancelled, timeout=1000):
        controller.cancel()
    assert not controller.busy
    controller.submit(base)
    assert wait_for_newest(qtbot, controller, rec).main.scenario == base
    assert len(rec.results) == 1  # never the cancelled run's


# -- the compute process on its own -----------------------------------------------------------------


def start_server() -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "planner_gui", "_compute-server"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        cwd=ROOT,
    )


def long_request(gen: int) -> PlanRequest:
    return PlanRequest(load_preset("llama3-405b").replace(gpus=1_000_000, days=365.0, trials=2000), FULL, gen)


def test_server_exits_when_its_input_ends_mid_run():
    with start_server() as proc:
        write_frame(proc.stdin, long_request(1))
        assert read_frame(proc.stdout)[0] in ("progress", "part")  # it is computing
        proc.stdin.close()  # what the parent's death looks like
        assert proc.wait(30) == 0


#: A compute server whose one job sleeps without ever checking for a stop (as a study file read checks rarely).
DEAF_SERVER = """
import time
from planner_gui.core.session import jobs, server
jobs.JOBS["deaf"] = lambda seconds, *, should_stop, progress: (progress(0.0), time.sleep(seconds))
raise SystemExit(server.main())
"""


@pytest.mark.parametrize("how", ["quit", "end of input"])
def test_server_ends_a_computation_that_does_not_stop_soon_after_it_is_told_to(how):
    """Quitting the window while a view's compute process read a large study file left that process running,
    orphaned, for as long as the read took."""
    with subprocess.Popen(
        [sys.executable, "-c", DEAF_SERVER], stdin=subprocess.PIPE, stdout=subprocess.PIPE, cwd=ROOT
    ) as proc:
        watchdog = threading.Timer(120.0, proc.kill)  # a server that never ends fails the test, not hangs it
        watchdog.start()
        try:
            _tell_a_deaf_server_to_stop(proc, how)
        finally:
            watchdog.cancel()
            proc.kill()  # (a no-op once it has ended; if the test failed, the context's wait would wait 600 s)


def _tell_a_deaf_server_to_stop(proc: subprocess.Popen, how: str) -> None:
    from planner_gui.core.session.jobs import Job
    from planner_gui.core.session.server import STOP_GRACE_S

    write_frame(proc.stdin, Job("deaf", (600.0,), 1))
    answer = read_frame(proc.stdout)
    while answer[:2] != ("progress", 1):  # (the warm-up's answers first, if any)
        answer = read_frame(proc.stdout)
    told = time.monotonic()
    if how == "quit":
        write_frame(proc.stdin, "quit")
    proc.stdin.close()
    assert proc.wait(STOP_GRACE_S + 30) == 0
    assert time.monotonic() - told >= STOP_GRACE_S * 0.9  # it was given its grace, then ended


def test_the_stop_deadline_is_set_once_and_only_on_a_stop():
    from planner_gui.core.session.server import _Inbox

    exits: list[int] = []
    inbox = _Inbox(exit_now=exits.append, grace_s=0.01)
    inbox.put(("cancel", 3))
    time.sleep(0.1)
    assert exits == []  # a cancel is not a stop
    inbox.put("quit")
    inbox.put("quit")
    deadline = time.monotonic() + 10
    while not exits and time.monotonic() < deadline:
        time.sleep(0.01)
    time.sleep(0.1)
    assert exits == [0]


def test_server_exits_when_nobody_reads_its_answers():
    """A parent that stopped reading and then died: the server is blocked writing, and must end."""
    with start_server() as proc:
        small = load_preset("llama3-405b").replace(trials=50)
        for gen in range(1, 30):  # each answer is larger than the pipe holds
            write_frame(proc.stdin, PlanRequest(small, FULL, gen))
        proc.stdin.close()
        proc.stdout.close()
        assert proc.wait(30) == 0


def raw_frame(data: bytes) -> bytes:
    return len(data).to_bytes(8, "big") + data + (0).to_bytes(4, "big")  # (no out-of-band buffers)


@pytest.mark.parametrize(
    "bad", [b"\x80\x05not a pickle", b"cno_such_module\nThing\n."], ids=["garbage", "missing-module"]
)
def test_server_skips_a_request_it_cannot_unpickle(bad):
    with start_server() as proc:
        watchdog = threading.Timer(60.0, proc.kill)  # a hung server fails the test instead of hanging it
        watchdog.start()
        try:
            proc.stdin.write(raw_frame(bad))
            sc = load_preset("llama3-405b").replace(trials=50)
            write_frame(proc.stdin, PlanRequest(sc, FULL, 7))
            answers = [("progress", 0, None)]
            while answers[-1][0] in ("progress", "part"):
                answers.append(read_frame(proc.stdout))  # EOFError if the server quit; killed if it hangs
            proc.stdin.close()
            assert read_frame(proc.stdout)[0] == "bye"
        finally:
            watchdog.cancel()
        kind, gen, payload = answers[-1]
        assert (kind, gen) == ("result", 7) and payload.main.scenario == sc
        parts = [a for a in answers if a[0] == "part"]  # the main run, once, ahead of the result
        assert [(k, g) for k, g, _ in parts] == [("part", 7)] and parts[0][2].main.scenario == sc
        assert proc.wait(30) == 0


PARENT_SCRIPT = """
import os, signal, subprocess, sys
from planner_gui.core.session.plan import FULL, PlanRequest
from planner_gui.core.files.presets import load_preset
from planner_gui.core.session.server import read_frame, write_frame
server = subprocess.Popen([sys.executable, "-m", "planner_gui", "_compute-server"], stdin=subprocess.PIPE,
                          stdout=subprocess.PIPE)
sc = load_preset("llama3-405b").replace(gpus=1_000_000, days=365.0, trials=2000)
write_frame(server.stdin, PlanRequest(sc, FULL, 1))
assert read_frame(server.stdout)[0] in ("progress", "part")
print(server.pid, flush=True)
os.kill(os.getpid(), signal.SIGKILL)
"""


def process_ended(pid: int) -> bool:
    """True once ``pid`` has exited (a zombie counts: nobody may be left to reap an orphan here)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return True
    return stat.rsplit(")", 1)[1].split()[0] in ("Z", "X")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_server_exits_when_the_window_process_dies_mid_run(qtbot):
    parent = subprocess.run(
        [sys.executable, "-c", PARENT_SCRIPT], capture_output=True, text=True, cwd=ROOT, timeout=120
    )
    assert parent.returncode == -signal.SIGKILL, parent.stderr
    pid = int(parent.stdout)
    qtbot.waitUntil(lambda: process_ended(pid), timeout=30_000)


def test_a_frames_arrays_travel_beside_the_pickle_and_are_read_straight_into_memory():
    """A million-row study's 470 MB arrays were copied out of the pickle on the window's reading thread, holding
    the lock the window paints with. They travel as buffers of their own (pickle protocol 5), each read straight
    into memory it keeps: nothing is copied, and the object comes back equal."""
    import io

    from planner_gui.core.session.server import encode_frame, loads, read_frame_bytes

    values = np.arange(1_000_000, dtype=np.float64)
    message = ("result", 3, {"values": values, "text": "x"})
    pieces = encode_frame(message)
    assert any(isinstance(p, memoryview) and p.nbytes == values.nbytes for p in pieces)  # the array's own memory
    assert sum(len(p) for p in pieces if isinstance(p, bytes)) < 10_000  # the pickle holds no copy of it
    frame = read_frame_bytes(io.BytesIO(b"".join(bytes(p) for p in pieces)))
    kind, gen, payload = loads(frame)
    assert (kind, gen, payload["text"]) == ("result", 3, "x")
    assert np.array_equal(payload["values"], values)
    assert np.shares_memory(payload["values"], np.frombuffer(frame[1][0], dtype=np.float64))  # not copied
    with pytest.raises(EOFError):
        read_frame_bytes(io.BytesIO(b"".join(bytes(p) for p in pieces)[:-1]))  # a buffer cut short


@pytest.mark.skipif(not hasattr(os, "getpriority"), reason="no process priorities here")
def test_the_compute_server_gives_way_to_the_window():
    """On two cores, the window's compute process and two spares dialogs' computing at once left the window a part
    of a core (a 40 ms repaint took 160): the server runs at a lower priority than the window."""
    from planner_gui.core.session.server import NICENESS

    with start_server() as proc:
        try:
            deadline = time.monotonic() + 30
            mine = os.getpriority(os.PRIO_PROCESS, 0)
            while os.getpriority(os.PRIO_PROCESS, proc.pid) == mine and time.monotonic() < deadline:
                time.sleep(0.05)  # (until it has started)
            assert os.getpriority(os.PRIO_PROCESS, proc.pid) == min(mine + NICENESS, 19)
        finally:
            proc.stdin.close()
            proc.wait(30)
