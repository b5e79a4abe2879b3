"""Responsiveness of the window, offscreen.

It prints:
* start-up: from starting ``python -m planner_gui`` to its first results shown, beside a bare
  QApplication showing an empty QMainWindow, both measured in this run (each started afresh, several
  times; the app on its default scenario, and on another one opened with ``--scenario``);
* for 16,384 and 100,000 GPUs, where the time goes from a slider move to fresh plots: the compute
  process (main run, interval sweep, exact curve, GPU sweep), pickling and unpickling the result and the
  pipe, and each plot's update and repaint on the GUI thread (these moves run instrumented; the
  figures below them do not);
* the time from a slider move to all plots showing fresh results (the quick preview that comes first),
  p50 and p95 (floor: p95 <= 50 ms at 100,000 GPUs, single tier), and to the full-quality results that refine it,
  for a non-GPU slider (every curve recomputes) and for the GPU slider (the GPU sweep is reused);
* during a 60 Hz drag: how often the plots refresh and the latency of each preview (from the earliest
  move it includes); also for the GPU slider at 365 days, down from 1,000,000 GPUs, with how far the GPU
  count shown lags the slider's (previews fit a time budget at any size);
* the longest stall of the GUI event loop while all this runs (floor: none over 30 ms), measured by a
  5 ms timer on the GUI thread;
* at 100,000 GPUs with both recovery tiers on (the h100-100k-inmemory preset with its replicas in the same
  domain, so failures restore from both tiers): move -> all plots fresh, p95 (target <= 200 ms), moves of
  the fast stall slider, a 60 Hz drag, and the longest stall (target <= 100 ms);
* at 100,000 GPUs with a finite spare pool (89 spare nodes, the pool 99 % of failures find a spare in, a
  10-minute swap), restarting and continuing on the surviving replicas: move -> all plots fresh, p95 (target
  <= 200 ms), a 60 Hz drag, and the longest stall (target <= 100 ms).

Run: ``python benchmarks/bench_gui.py [--moves N] [--starts N] [--bundle DIR] [--tiers-only] [--spares-only]``
(``--bundle dist/planner-gui``: the standalone app's start too, after ``python packaging/build.py``).
With ``TRACE_STALLS=1`` it also prints, for each stall over ``TRACE_GAP`` ms (60), the events that took over
``TRACE_MS`` ms (15) during it.
"""

from __future__ import annotations

import argparse
import math
import os
import pickle
import subprocess
import sys
import tempfile
import time
import typing
from collections import defaultdict
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QElapsedTimer, QEventLoop, QSettings, QTimer
from PySide6.QtWidgets import QApplication

ROOT = Path(__file__).resolve().parent.parent


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
                name = receiver.objectName() if hasattr(receiver, "objectName") else ""
                if not name and hasattr(receiver, "parent") and callable(receiver.parent) and receiver.parent():
                    name = receiver.parent().objectName()  # a plot's viewport: the plot's name
                what = f"{type(receiver).__name__}{'/' + name if name else ''}"
                self.slow.append((time.perf_counter(), round(ms, 1), event.type().name, what))


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


# -- start-up ---------------------------------------------------------------------------------------

BARE_WINDOW = """
import sys
from PySide6.QtCore import QEvent, QObject, QTimer
from PySide6.QtWidgets import QApplication, QMainWindow
app = QApplication(sys.argv[:1])
win = QMainWindow()
win.resize(1440, 900)
class FirstPaint(QObject):
    def eventFilter(self, obj, event):
        if event.type() == QEvent.Type.Paint:
            print("painted", flush=True)
            QTimer.singleShot(0, app.quit)
        return False
first = FirstPaint()
win.installEventFilter(first)
win.show()
app.exec()
"""


def _start_env(home: str) -> dict[str, str]:
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", PLANNER_GUI_QUIT_AFTER_START="1")
    env["XDG_CONFIG_HOME"] = os.path.join(home, "config")  # no remembered window or scenario
    env["XDG_DATA_HOME"] = os.path.join(home, "data")  # the log
    return env


def _time_to_line(argv: list[str], stream: str, marker: str, env: dict[str, str]) -> float:
    """Seconds from starting ``argv`` to a line containing ``marker`` on its ``stream``."""
    t0 = time.perf_counter()
    out = subprocess.PIPE if stream == "stdout" else subprocess.DEVNULL
    err = subprocess.PIPE if stream == "stderr" else subprocess.DEVNULL
    with subprocess.Popen(argv, stdout=out, stderr=err, env=env, cwd=ROOT, text=True) as proc:
        pipe = proc.stdout if stream == "stdout" else proc.stderr
        assert pipe is not None
        for line in pipe:
            if marker in line:
                elapsed = time.perf_counter() - t0
                break
        else:
            raise RuntimeError(f"{argv} ended without printing {marker!r}")
        pipe.read()
        proc.wait(60)
    return elapsed


def start_up(repeats: int, bundle: str | None = None) -> None:
    """Start the app (and the standalone bundle's, from its folder ``bundle``) and a bare window in turn,
    ``repeats`` times each; print medians and ranges."""
    home = tempfile.mkdtemp()
    other = os.path.join(home, "other.json")
    from planner_gui.core.files.presets import load_preset
    from planner_gui.core.files.scenario_io import save

    save(load_preset("h100-100k"), other)
    env = _start_env(home)
    app = [sys.executable, "-m", "planner_gui"]
    times: dict[str, list[float]] = defaultdict(list)
    for _ in range(repeats):
        times["bare"].append(_time_to_line([sys.executable, "-c", BARE_WINDOW], "stdout", "painted", env))
        times["app"].append(_time_to_line(app, "stderr", "init finished", env))
        times["other"].append(_time_to_line([*app, "--scenario", other], "stderr", "init finished", env))
        if bundle is not None:
            times["bundle"].append(_time_to_line([os.path.join(bundle, "planner-gui")], "stderr", "init finished", env))
    bare = float(np.median(times["bare"]))

    def show(label: str, key: str) -> str:
        v = np.asarray(times[key])
        ratio = f", {np.median(v) / bare:.1f}x the bare window" if key != "bare" else ""
        return f"{label}: p50 {np.median(v) * 1000:5.0f} ms (range {v.min() * 1000:.0f}-{v.max() * 1000:.0f}){ratio}"

    print(f"start-up, {repeats} starts each (offscreen):")
    print("  " + show("bare QApplication + empty QMainWindow, first paint       ", "bare"))
    print("  " + show("planner-gui to first results, default scenario           ", "app"))
    print("  " + show("planner-gui --scenario h100-100k.json to first results   ", "other"))
    if bundle is not None:
        print("  " + show("the bundle's planner-gui to first results (floor: 1.0 s)", "bundle"))


# -- where the time goes -----------------------------------------------------------------------------

STEP_NAMES = {
    "_show_gpus": "GPU plots (2)",
    "_show_interval": "interval",
    "_show_components": "components",
    "_show_histogram": "histogram",
    "_show_breakdown": "time breakdown",
}


_PAINT_HOOK: list[typing.Callable[[float], None]] = []


def hook_plot_repaints() -> None:
    """Time every plot's repaints for an attached :class:`Breakdown` (PySide looks a virtual method up
    once per class, so this must run before the first plot is made)."""
    saved = pg.GraphicsView.paintEvent

    def paint(view, event):
        t0 = time.perf_counter()
        try:
            return saved(view, event)
        finally:
            for hook in _PAINT_HOOK:
                hook(time.perf_counter() - t0)

    pg.GraphicsView.paintEvent = paint


class Breakdown:
    """While attached: for every result shown, the compute process's timings, the trip to the GUI
    thread, and the GUI thread's time per plot (its update, and its repaints until the next update)."""

    def __init__(self, win) -> None:
        self.win = win
        self.rows: dict[int, dict[str, float]] = defaultdict(lambda: defaultdict(float))
        self.results: dict[int, object] = {}
        self.moved_at: dict[int, float] = {}
        self.shown_at: dict[int, float] = {}
        self._current = ("", 0)  # (what was updated last, its generation): repaints are counted to it

    def attach(self) -> None:
        plots = self.win.plots
        for method in STEP_NAMES:
            setattr(plots, method, self._timed(getattr(plots, method), method))
        summary = self.win.summary
        summary.show_result = self._timed(summary.show_result, "summary")
        _PAINT_HOOK[:] = [self._painted]
        self.win.resultsShown.connect(self._shown)

    def _painted(self, seconds: float) -> None:
        name, gen = self._current
        self.rows[gen][f"paint {name}"] += seconds

    def detach(self) -> None:
        for attr in (*STEP_NAMES, "summary"):
            owner = self.win.summary if attr == "summary" else self.win.plots
            owner.__dict__.pop("show_result" if attr == "summary" else attr, None)
        _PAINT_HOOK.clear()
        self.win.resultsShown.disconnect(self._shown)

    def _timed(self, fn, name: str):
        from planner_gui.core.session.plan import PlanResult

        def run(res, *args):
            gen = res.request.generation
            self._current = (name, gen)
            if isinstance(res, PlanResult):  # (a full run's part draws first: its whole result is the one reported)
                self.results[gen] = res
            t0 = time.perf_counter()
            try:
                return fn(res, *args)
            finally:
                self.rows[gen][f"update {name}"] += time.perf_counter() - t0

        return run

    def _shown(self) -> None:
        self.shown_at[self.win.last_result.request.generation] = time.perf_counter()

    def report(self, quality: str) -> list[str]:
        """Lines of medians (ms) over the results of ``quality`` that were drawn in full."""
        keep = []
        for gen, res in self.results.items():
            row = self.rows[gen]
            if res.request.quality.name != quality or gen not in self.shown_at or gen not in self.moved_at:
                continue
            st, tm = res.stamps, res.timings
            data = pickle.dumps(("result", gen, res), protocol=pickle.HIGHEST_PROTOCOL)
            t0 = time.perf_counter()
            pickle.dumps(("result", gen, res), protocol=pickle.HIGHEST_PROTOCOL)
            t1 = time.perf_counter()
            pickle.loads(data)
            t2 = time.perf_counter()
            keep.append(
                {
                    "total": self.shown_at[gen] - self.moved_at[gen],
                    "request": st["sent"] - self.moved_at[gen] - res.seconds,
                    **{f"compute {k}": tm.get(k, np.nan) for k in ("main", "interval", "exact", "gpus")},
                    "bytes": len(data),
                    "pickle": t1 - t0,
                    "unpickle": t2 - t1,
                    "to reader": st["received"] - st["sent"],
                    "reader unpickle": st["unpickled"] - st["received"],
                    "to GUI thread": st["delivered"] - st["unpickled"],
                    "render": self.shown_at[gen] - st["delivered"],
                    **row,
                }
            )
        if not keep:
            return [f"    (no {quality} result was drawn in full)"]
        med = {
            k: float(np.nanmedian([r.get(k, np.nan) for r in keep])) * (1 if k == "bytes" else 1000) for k in keep[0]
        }
        gpus = sum(np.isfinite(r["compute gpus"]) for r in keep)
        plots = ", ".join(
            f"{label} {med.get('update ' + m, 0):.1f} + {med.get('paint ' + m, 0):.1f}"
            for m, label in STEP_NAMES.items()
        )
        return [
            f"    {quality} ({len(keep)} results): move -> all plots fresh p50 {med['total']:.1f} ms = request "
            f"{med['request']:.1f}{' (sent once the preview came)' if quality == 'full' else ''} "
            f"+ compute {res_sum(med, 'compute'):.1f} + to the GUI thread "
            f"{med['to reader'] + med['reader unpickle'] + med['to GUI thread']:.1f} + render {med['render']:.1f}",
            f"      compute process: main run {med['compute main']:.1f}, interval sweep {med['compute interval']:.1f}, "
            f"exact curve {med['compute exact']:.1f}, GPU sweep {med['compute gpus']:.1f} ms "
            f"(computed for {gpus} of {len(keep)}; else cached)",
            f"      result {med['bytes'] / 1000:.0f} kB: pickle {med['pickle']:.2f} ms, "
            f"unpickle {med['unpickle']:.2f} ms; "
            f"compute process -> reader thread (pickle + pipe) {med['to reader']:.2f}, unpickle there "
            f"{med['reader unpickle']:.2f}, -> GUI thread {med['to GUI thread']:.2f} ms",
            f"      GUI thread, update + repaint (ms): summary {med.get('update summary', 0):.1f}; {plots}",
        ]


def res_sum(med: dict[str, float], prefix: str) -> float:
    return float(np.nansum([v for k, v in med.items() if k.startswith(prefix + " ")]))


def breakdown(win, slider, moves: int) -> list[str]:
    probe = Breakdown(win)
    probe.attach()
    try:
        base = slider.value()
        for i in range(moves):
            t0 = time.perf_counter()
            slider.setValue(base + 7 * (i + 1) if base + 7 * moves < slider.maximum() else base - 7 * (i + 1))
            gen = win.compute.generation
            probe.moved_at[gen] = probe.moved_at[gen + 1] = t0  # the full run is gen + 1
            wait_shown(win, gen)
            wait_shown(win, gen, full=True)
            pump(20)
    finally:
        probe.detach()
    return probe.report("preview") + probe.report("full")


# -- latency ------------------------------------------------------------------------------------------


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


def drag(win, slider, seconds: float = 2.0, step: int = 3) -> tuple[int, float, list[float], float, list[float]]:
    """Drag at 60 Hz; return (refreshes of all plots, updates of each plot, preview latencies, time from
    release to full results, how far the GPU count shown was behind the slider's at each tick, in
    doublings).

    A result that comes while the plots are drawn takes over the plots not drawn yet, so plots may be
    updated more often than all of them show one result together. A preview's latency is counted from
    the earliest move it includes (moves made while a preview is computed go into the next one).
    """
    shown_at: list[tuple[float, int]] = []
    moved_at: dict[int, float] = {}
    behind: list[float] = []
    hook = lambda: shown_at.append((time.perf_counter(), win.last_result.request.generation))
    win.resultsShown.connect(hook)
    plots, updates = win.plots, [0]
    saved = plots._render

    def counted(*args) -> None:
        updates[0] += 1
        saved(*args)

    plots._render = counted
    slider.setSliderDown(True)
    start = time.perf_counter()
    v = slider.value()
    sent, pending = win.compute.generation, None  # pending: the earliest move not sent yet
    while time.perf_counter() - start < seconds:
        if win.compute.generation != sent and pending is not None:  # sent meanwhile, with the moves before
            moved_at[win.compute.generation], pending = pending, None
        sent = win.compute.generation
        if step > 0:
            v = v + step if v < slider.maximum() - 10 else slider.minimum() + 10
        else:
            v = v + step if v > slider.minimum() + 10 else slider.maximum() - 10
        t = time.perf_counter()
        slider.setValue(v)
        if win.compute.generation != sent:  # sent at once
            moved_at[win.compute.generation], pending = (pending if pending is not None else t), None
            sent = win.compute.generation
        elif pending is None:
            pending = t
        pump(16)
        behind.append(abs(math.log2(win.last_result.main.scenario.gpus / win.inputs.scenario.gpus)))
    slider.setSliderDown(False)
    t_release = time.perf_counter()
    slider.sliderReleased.emit()
    wait_shown(win, win.compute.generation)
    full = time.perf_counter() - t_release
    win.resultsShown.disconnect(hook)
    del plots._render
    latencies = [t - moved_at[g] for t, g in shown_at if g in moved_at]
    return len(shown_at), updates[0] / len(STEP_NAMES), latencies, full, behind


def pct(v: list[float], q: float) -> float:
    return float(np.percentile(np.asarray(v) * 1000, q)) if len(v) else float("nan")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--moves", type=int, default=40)
    ap.add_argument("--starts", type=int, default=5, help="starts of the app and of the bare window (0: none)")
    ap.add_argument(
        "--bundle", metavar="DIR", help="also start the standalone app in DIR (dist/planner-gui of packaging/build.py)"
    )
    ap.add_argument("--tiers-only", action="store_true", help="only the line with both recovery tiers on")
    ap.add_argument("--spares-only", action="store_true", help="only the lines with a finite spare pool")
    ap.add_argument("--plan-only", action="store_true", help="only the line of h100-100k-plan (everything on)")
    args = ap.parse_args()
    if args.bundle is not None and not os.access(os.path.join(args.bundle, "planner-gui"), os.X_OK):
        ap.error(f"--bundle: no planner-gui program in {args.bundle} (build it: python packaging/build.py)")
    if args.starts and not (args.tiers_only or args.spares_only or args.plan_only):
        start_up(args.starts, args.bundle)
    QSettings.setPath(QSettings.Format.NativeFormat, QSettings.Scope.UserScope, tempfile.mkdtemp())
    app = (_TracingApp if os.environ.get("TRACE_STALLS") else QApplication)(sys.argv[:1])
    app.setOrganizationName("planner-gui-bench")
    from planner_gui.ui.theme import configure_pyqtgraph

    configure_pyqtgraph(app)  # the same plot settings as the app
    from planner_gui.core.files.presets import load_preset
    from planner_gui.ui import MainWindow

    hook_plot_repaints()
    win = MainWindow(load_preset("llama3-405b"), restore=False)
    win.resize(1600, 1000)
    win.show()
    wait_shown(win, 1)
    monitor = StallMonitor()
    restart = win.controls.values["restart_min"].slider
    gpus = win.controls.values["gpus"].slider
    worst = 0
    if args.tiers_only or args.spares_only or args.plan_only:
        line = tiers_line if args.tiers_only else spares_lines if args.spares_only else plan_line
        worst = line(win, monitor, restart, args.moves)
        win._confirm_discard = lambda: True
        win.close()
        return 0
    for n in (16_384, 100_000):
        win.inputs.update(gpus=n)
        wait_shown(win, win.compute.generation, full=True)
        print(f"{n:>7,} GPUs: where the time goes (instrumented; medians over {args.moves // 2} restart-slider moves):")
        for line in breakdown(win, restart, args.moves // 2):
            print(line)
        monitor.start()
        t_other, t_other_full = released_moves(win, restart, args.moves)
        t_gpu, t_gpu_full = released_moves(win, gpus, args.moves // 2)
        refreshes, updates, latencies, full, _ = drag(win, restart)
        stall = monitor.stop()
        worst = max(worst, stall)
        print(
            f"{'':>12} move -> all plots fresh, restart slider: p50 {pct(t_other, 50):6.1f} ms, "
            f"p95 {pct(t_other, 95):6.1f} ms" + ("  (floor: p95 <= 50 ms)" if n == 100_000 else "")
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
            f"{'':>12} 2 s drag at 60 Hz: {refreshes} refreshes of all plots ({updates:.0f} updates of each plot), "
            f"preview latency p50 {pct(latencies, 50):.1f} ms, p95 {pct(latencies, 95):.1f} ms; "
            f"release -> full results {full * 1000:.0f} ms"
        )
        print(f"{'':>12} longest GUI event-loop stall: {stall} ms (floor: 30 ms)")
    win.inputs.update(gpus=1_000_000, days=365.0)
    wait_shown(win, win.compute.generation, full=True)
    monitor.start()
    refreshes, updates, latencies, full, behind = drag(win, gpus, step=-3)
    stall = monitor.stop()
    worst = max(worst, stall)
    shown = win.last_result.request.scenario
    print(
        f"365 days, GPU slider dragged down from 1,000,000 for 2 s at 60 Hz: {refreshes} refreshes of all plots "
        f"({updates:.0f} updates of each plot), preview latency p50 {pct(latencies, 50):.1f} ms, "
        f"p95 {pct(latencies, 95):.1f} ms; the GPU count shown behind the slider's by {np.median(behind):.2f} "
        f"doublings (median; max {max(behind):.2f}); released at {shown.gpus:,} GPUs, full results "
        f"{full * 1000:.0f} ms later; longest stall {stall} ms"
    )
    worst = max(worst, tiers_line(win, monitor, restart, args.moves))
    worst = max(worst, spares_lines(win, monitor, restart, args.moves))
    worst = max(worst, plan_line(win, monitor, restart, args.moves))
    win._confirm_discard = lambda: True
    win.close()
    print(f"worst stall overall: {worst} ms")
    return 0


def tiers_line(win, monitor, restart, moves: int) -> int:
    """Both recovery tiers on at 100,000 GPUs (replicas in the same domain: both tiers restore); returns the
    longest stall."""
    import dataclasses

    from planner_gui.core.files.presets import load_preset

    sc = load_preset("h100-100k-inmemory")
    win.set_scenario(sc.replace(tiers=dataclasses.replace(sc.tiers, fast_placement="same-domain")))
    wait_shown(win, win.compute.generation, full=True)
    stall_slider = win.controls.tiers.values["fast_stall_s"].slider
    monitor.start()
    t_other, t_full = released_moves(win, restart, moves)
    t_stall, _ = released_moves(win, stall_slider, moves // 2)
    refreshes, _, latencies, full, _ = drag(win, restart)
    stall = monitor.stop()
    print(
        f"100,000 GPUs, both tiers on (h100-100k-inmemory, same-domain): move -> all plots fresh, restart slider "
        f"p50 {pct(t_other, 50):.1f} ms, p95 {pct(t_other, 95):.1f} ms (target: p95 <= 200 ms); full quality "
        f"p50 {pct(t_full, 50):.1f} ms, p95 {pct(t_full, 95):.1f} ms; fast stall slider p50 "
        f"{pct(t_stall, 50):.1f} ms, p95 {pct(t_stall, 95):.1f} ms; 2 s drag: {refreshes} refreshes, preview "
        f"latency p95 {pct(latencies, 95):.1f} ms, release -> full {full * 1000:.0f} ms; longest stall "
        f"{stall} ms (target: 100 ms)"
    )
    return stall


def spares_lines(win, monitor, restart, moves: int) -> int:
    """100,000 GPUs with a finite spare pool, restarting and continuing; returns the longest stall."""
    from planner_gui.core.files.presets import load_preset
    from planner_gui.core.model.spares import Spares

    worst = 0
    for mode in ("restart", "continue"):
        sc = load_preset("llama3-405b").replace(
            gpus=100_000, spares=Spares(spare_nodes=89, swap_min=10, recovery_mode=mode)
        )
        win.set_scenario(sc)
        wait_shown(win, win.compute.generation, full=True)
        monitor.start()
        t_other, t_full = released_moves(win, restart, max(4, moves // 2))
        refreshes, _, latencies, full, _ = drag(win, restart)
        stall = monitor.stop()
        worst = max(worst, stall)
        print(
            f"100,000 GPUs, 89 spare nodes, swap 10 min, {mode}: move -> all plots fresh, restart slider "
            f"p50 {pct(t_other, 50):.1f} ms, p95 {pct(t_other, 95):.1f} ms (target: p95 <= 200 ms); full quality "
            f"p50 {pct(t_full, 50):.0f} ms, p95 {pct(t_full, 95):.0f} ms; 2 s drag: {refreshes} refreshes, preview "
            f"latency p95 {pct(latencies, 95):.1f} ms, release -> full {full * 1000:.0f} ms; longest stall "
            f"{stall} ms (target: 100 ms)"
        )
    return worst


def plan_line(win, monitor, restart, moves: int) -> int:
    """h100-100k-plan: every feature at once at 100,000 GPUs on the general engine (in-memory tier, 89 spare nodes,
    continue, a burn-in, rate uncertainty, a training run); returns the longest stall."""
    from planner_gui.core.files.presets import load_preset

    win.set_scenario(load_preset("h100-100k-plan"))
    wait_shown(win, win.compute.generation, timeout_s=600.0, full=True)
    monitor.start()
    t_other, t_full = [], []
    base = restart.value()
    for i in range(max(4, moves // 8)):  # (as released_moves, with room for a full run of a minute or more)
        t0 = time.perf_counter()
        restart.setValue(base + 7 * (i + 1))
        gen = win.compute.generation
        wait_shown(win, gen, timeout_s=600.0)
        t_other.append(time.perf_counter() - t0)
        wait_shown(win, gen, timeout_s=600.0, full=True)
        t_full.append(time.perf_counter() - t0)
        pump(20)
    stall = monitor.stop()
    print(
        f"h100-100k-plan (everything on, 100,000 GPUs): move -> all plots fresh, restart slider p50 "
        f"{pct(t_other, 50):.0f} ms, p95 {pct(t_other, 95):.0f} ms (target: p95 <= 150 ms); full quality p50 "
        f"{pct(t_full, 50) / 1000:.1f} s, p95 {pct(t_full, 95) / 1000:.1f} s (target: 3 s); longest stall {stall} ms "
        "(target: 50 ms)"
    )
    return stall


if __name__ == "__main__":
    sys.exit(main())
