"""The suite's own check that no test leaves a process or a thread behind (tests/conftest.py) finds them."""

from __future__ import annotations

import subprocess
import sys
import threading

import psutil
from conftest import leftover_processes, leftover_threads


def test_a_process_left_running_is_found_and_killed():
    before = {p.pid for p in psutil.Process().children(recursive=True)}
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    try:
        found = leftover_processes(before, grace=0.5)
        assert len(found) == 1 and found[0].startswith(f"process {proc.pid} ") and "time.sleep(120)" in found[0]
        assert not psutil.pid_exists(proc.pid)  # killed (and reaped) by the check
    finally:
        proc.kill()
        proc.wait()


def test_a_thread_left_running_is_found_and_one_that_ends_in_time_is_not():
    threads = set(threading.enumerate())
    stop = threading.Event()
    lingering = threading.Thread(target=stop.wait, name="lingering", daemon=True)
    lingering.start()
    quick = threading.Thread(target=lambda: stop.wait(0.2), name="quick", daemon=True)
    quick.start()
    try:
        assert leftover_threads(threads, grace=1.0) == ["thread 'lingering'"]
    finally:
        stop.set()
        lingering.join()
    assert leftover_threads(threads, grace=1.0) == []
