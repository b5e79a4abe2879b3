"""The window under faults of its compute process: killed again and again, stopped, gone for good.

The GUI thread must never be blocked over 100 ms (``StallMeter.blocked`` in test_compute.py: a 5 ms timer
on the GUI thread, its gaps less the time the thread ran or waited for a CPU), no Monte Carlo may run in
the window's process, and results must come back. The thread's own work (painting the results) is left
to benchmarks/bench_gui.py: its speed is the machine's as much as the window's.
"""

from __future__ import annotations

import os
import signal

import pytest
from test_compute import MAX_STALL_S, StallMeter
from test_gui import settle

needs_sigstop = pytest.mark.skipif(not hasattr(signal, "SIGSTOP"), reason="needs POSIX signals")


@pytest.fixture(autouse=True)
def _no_computation_in_the_window_process(monkeypatch):
    """Every result must come from the compute process: computing one here fails the test."""

    def refuse(*args, **kwargs):
        raise AssertionError("a plan was computed in the window's process")

    monkeypatch.setattr("planner_gui.core.session.plan.compute_plan", refuse)


def current_process(qtbot, win):
    qtbot.waitUntil(lambda: win.compute._process is not None and win.compute._process.poll() is None, timeout=30_000)
    return win.compute._process


def test_the_window_survives_repeated_kills_without_stalling(make_window, qtbot, monkeypatch):
    win = make_window()
    # Deaths spread over a session never give up: count them in a short window for the test.
    monkeypatch.setattr(type(win.compute), "DEATH_WINDOW_S", 0.5)
    with StallMeter() as meter:
        for i in range(5):
            proc = current_process(qtbot, win)
            win.inputs.update(detect_min=5.0 + i)
            proc.kill()
            qtbot.wait(600)  # past the death window: the next death counts afresh
            settle(qtbot, win)
            assert win.last_result.main.scenario.detect_min == 5.0 + i
    assert meter.blocked < MAX_STALL_S, str(meter)
    assert not win.banner.isVisible()


@needs_sigstop
def test_the_window_keeps_running_while_the_compute_process_is_stopped(make_window, qtbot):
    win = make_window()
    proc = current_process(qtbot, win)
    os.kill(proc.pid, signal.SIGSTOP)
    try:
        with StallMeter() as meter:
            for i in range(200):  # far more edits than a stopped process can take
                win.inputs.update(restart_min=5.0 + i / 10)
                qtbot.wait(5)
    finally:
        os.kill(proc.pid, signal.SIGCONT)
    settle(qtbot, win)
    assert meter.blocked < MAX_STALL_S, str(meter)
    assert win.last_result.main.scenario.restart_min == pytest.approx(5.0 + 199 / 10)


def test_when_the_compute_process_keeps_dying_the_window_says_so_and_can_restart(make_window, qtbot):
    win = make_window()
    for _ in range(win.compute.MAX_DEATHS + 1):
        proc = current_process(qtbot, win)
        proc.kill()
        qtbot.waitUntil(lambda proc=proc: win.compute._process is not proc, timeout=30_000)
    qtbot.waitUntil(lambda: win.compute.gave_up, timeout=30_000)
    win.inputs.update(detect_min=9.0)
    assert not win.compute.busy and not win.progress.isVisible()
    assert win.banner.isVisible() and win.restart_button.isVisible()
    assert "Out of date" in win.stale_label.text()
    win.restart_button.click()
    settle(qtbot, win)
    assert win.last_result.main.scenario.detect_min == 9.0
    assert not win.banner.isVisible()
