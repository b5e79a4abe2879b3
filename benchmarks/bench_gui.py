"""Responsiveness of the window, offscreen.

For 16,384 and 100,000 GPUs it prints, over many slider moves:
* the time from a slider move to all plots showing fresh results (the quick preview that comes first),
  p50 and p95 (floor: p95 <= 200 ms at 100,000 GPUs), and to the full-quality results that refine it,
  for a non-GPU slider (every curve recomputes) and for the GPU slider (the GPU sweep is reused);
* during a 60 Hz drag: how often the plots refresh and the latency of each preview;
* the longest stall of the GUI event loop while all this runs (floor: none over 100 ms), measured by a
  5 ms timer on the GUI thread.

Run: ``python benchmarks/bench_gui.py [--moves N]``. With ``TRACE_STALLS=1`` it also prints, for each
stall over ``TRACE_GAP`` ms (60), the events that took over ``TRACE_MS`` ms (15) during it.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
import typing

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np
from PySide6.QtCore import QElapsedTimer, QEventLoop, QSettings, QTimer
from PySide6.QtWidgets import QApplication


class _TracingApp(QApplication):
    """With TRACE_STALLS=1: remember every event that takes over 15 ms, to explain stalls."""

    slow: typing.ClassVar[list] = []

    def notify(self, receiver, event):
        t0 = time.perf_counter()
        try:
            return super().notify(receiver, event)
        finally:
            ms = (time.perf_counter() - t0) * 1000
            if ms > float(os.environ.get("TRACE_MS", "15")):
                self.slow.append((time.perf_counter(), round(ms, 1), event.type().name, type(receiver).__name__))


class StallMonitor:
    """A 5 ms timer on the GUI thread; the longest gap between its ticks is the longest stall."""

    def __init__(self) -> None:
        self.timer = QTimer()
        self.timer.setInterval(5)
        self.clock = QElapsedTimer()
        self.last = 0
        self.worst = 0
        self.timer.timeout.connect(self._tick)

    def start(self) -> None:
        self.clock.start()
        self.last = 0
        self.worst = 0
        self.timer.start()

    def _tick(self) -> None:
        now = self.clock.elapsed()
        if os.environ.get("TRACE_STALLS") and now - self.last > int(os.environ.get("TRACE_GAP", "60")):
            t = time.perf_counter()
            window = (now - self.last) / 1000 + 0.01
            recent = [(round((t - s[0]) * 1000), *s[1:]) for s in _TracingApp.slow if t - s[0] < window]
            print(f"  stall {now - self.last} ms; slow events (ms ago, ms, type, receiver): {recent}")
        self.worst = max(self.worst, now - self.last)
        self.last = now

    def stop(self) -> int:
        self.timer.stop()
        return self.worst


def wait_shown(win, generation: int, timeout_s: float = 60.0, full: bool = False) -> float:
    """Process events until results for ``generation`` (or newer; with ``full``, full-quality ones)
    are shown; return the time waited."""
    t0 = time.perf_counter()
    loop = QEventLoop()

    def done() -> bool:
        r = win.last_result
        return r is not None and r.request.generation >= generation and (not full or r.request.quality.name == "full")

    def check() -> None:
        if done():
            loop.quit()

    win.resultsShown.connect(check)
    QTimer.singleShot(int(timeout_s * 1000), loop.quit)
    if not done():
        loop.exec()
    win.resultsShown.disconnect(check)
    QApplication.processEvents()  # "showing" includes the repaint that the new data asked for
    return time.perf_counter() - t0


def pump(ms: int) -> None:
    loop = QEventLoop()
    QTimer.singleShot(ms, loop.quit)
    loop.exec()


def released_moves(win, slider, moves: int) -> tuple[list[float], list[float]]:
    """Times from each move to fresh (preview) results on every plot, and to the full-quality ones."""
    fresh, full = [], []
    base = slider.value()
    for i in range(moves):
        t0 = time.perf_counter()
        # Every move is to a new value, so nothing is served from a cache.
        slider.setValue(base + 7 * (i + 1) if base + 7 * moves < slider.maximum() else base - 7 * (i + 1))
        gen = win.compute.generation
        wait_shown(win, gen)
        fresh.append(time.perf_counter() - t0)
        wait_shown(win, gen, full=True)
        full.append(time.perf_counter() - t0)
        pump(20)
    return fresh, full


def drag(win, slider, seconds: float = 2.0) -> tuple[int, list[float], float]:
    """Drag at 60 Hz; return (refreshes, preview latencies, time from release to full results)."""
    shown_at: list[tuple[float, int]] = []
    moved_at: dict[int, float] = {}
    hook = lambda: shown_at.append((time.perf_counter(), win.last_result.request.generation))
    win.resultsShown.connect(hook)
    slider.setSliderDown(True)
    start = time.perf_counter()
    v = slider.value()
    while time.perf_counter() - start < seconds:
        v = v + 3 if v < slider.maximum() - 10 else slider.minimum() + 10
        slider.setValue(v)
        moved_at[win.compute.generation] = time.perf_counter()
        pump(16)
    slider.setSliderDown(False)
    t_release = time.perf_counter()
    slider.sliderReleased.emit()
    wait_shown(win, win.compute.generation)
    full = time.perf_counter() - t_release
    win.resultsShown.disconnect(hook)
    latencies = [t - moved_at[g] for t, g in shown_at if g in moved_at]
    return len(shown_at), latencies, full


def pct(v: list[float], q: float) -> float:
    return float(np.percentile(np.asarray(v) * 1000, q))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--moves", type=int, default=40)
    args = ap.parse_args()
    QSettings.setPath(QSettings.Format.NativeFormat, QSettings.Scope.UserScope, tempfile.mkdtemp())
    app = (_TracingApp if os.environ.get("TRACE_STALLS") else QApplication)(sys.argv[:1])
    app.setOrganizationName("planner-gui-bench")
    from planner_gui.ui.theme import configure_pyqtgraph

    configure_pyqtgraph(app)  # the same plot settings as the app
    from planner_gui.core.scenario_io import load_preset
    from planner_gui.ui import MainWindow

    win = MainWindow(load_preset("llama3-405b"), restore=False)
    win.resize(1600, 1000)
    win.show()
    wait_shown(win, 1)
    monitor = StallMonitor()
    restart = win.controls.values["restart_min"].slider
    gpus = win.controls.values["gpus"].slider
    worst = 0
    for n in (16_384, 100_000):
        win.inputs.update(gpus=n)
        wait_shown(win, win.compute.generation, full=True)
        monitor.start()
        t_other, t_other_full = released_moves(win, restart, args.moves)
        t_gpu, t_gpu_full = released_moves(win, gpus, args.moves // 2)
        refreshes, latencies, full = drag(win, restart)
        stall = monitor.stop()
        worst = max(worst, stall)
        print(
            f"{n:>7,} GPUs: move -> all plots fresh, restart slider: p50 {pct(t_other, 50):6.1f} ms, "
            f"p95 {pct(t_other, 95):6.1f} ms" + ("  (floor: p95 <= 200 ms)" if n == 100_000 else "")
        )
        print(
            f"{'':>12} ... refined to full quality:       p50 {pct(t_other_full, 50):6.1f} ms, "
            f"p95 {pct(t_other_full, 95):6.1f} ms"
        )
        print(
            f"{'':>12} GPU slider (GPU sweep reused):    p50 {pct(t_gpu, 50):6.1f} ms, p95 {pct(t_gpu, 95):6.1f} ms; "
            f"full p50 {pct(t_gpu_full, 50):6.1f} ms, p95 {pct(t_gpu_full, 95):6.1f} ms"
        )
        print(
            f"{'':>12} 2 s drag at 60 Hz: {refreshes} refreshes, preview latency p50 {pct(latencies, 50):.1f} ms, "
            f"p95 {pct(latencies, 95):.1f} ms; release -> full results {full * 1000:.0f} ms"
        )
        print(f"{'':>12} longest GUI event-loop stall: {stall} ms (floor: 100 ms)")
    win._confirm_discard = lambda: True
    win.close()
    print(f"worst stall overall: {worst} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
