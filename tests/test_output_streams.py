"""Output that cannot be written is an error: standard output closed, on a full disk, on a failing device.

In-process for every command (a closed stdout is ``sys.stdout = None``, as Python leaves it; a full disk is a
stream whose writes fail with ENOSPC), and on a real process for what only a process shows: the exit
status after Python's own last flush.
"""

from __future__ import annotations

import errno
import io
import os
import subprocess
import sys
from pathlib import Path

import pytest

from planner_gui.cli import main

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "docs" / "examples"


class FullDisk(io.TextIOBase):
    """A text stream on a full disk: everything written fails when it reaches the disk (at flush)."""

    def __init__(self) -> None:
        self.pending = 0
        self.buffer = self  # (report -o - writes its bytes here)

    def writable(self) -> bool:
        return True

    def write(self, s):  # type: ignore[override]
        self.pending += len(s)
        if self.pending > 4096:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return len(s)

    def flush(self) -> None:
        if self.pending:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


def _commands(tmp_path: Path) -> dict[str, list[str]]:
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    assert main(["run", "--trials", "20", "--save", str(a)]) == 0
    assert main(["run", "--trials", "20", "--gpus", "32768", "--save", str(b)]) == 0
    return {
        "run": ["run", "--trials", "20"],
        "run --json": ["run", "--trials", "20", "--json"],
        "run --help": ["run", "--help"],
        "compare": ["compare", str(a), str(b)],
        "sensitivity": ["sensitivity", "--trials", "20"],
        "fit": ["fit", str(EXAMPLES / "incidents.csv"), "--gpus", "2048"],
        "sweep": ["sweep", "--points", "3", "--trials", "20"],
        "report -o -": ["report", "--trials", "20", "-o", "-"],
        "--version": ["--version"],
    }


@pytest.fixture(scope="module")
def commands(tmp_path_factory):
    folder = tmp_path_factory.mktemp("out")
    saved = sys.stdout
    sys.stdout = io.StringIO()
    try:
        return _commands(folder)
    finally:
        sys.stdout = saved


NAMES = ["run", "run --json", "run --help", "compare", "sensitivity", "fit", "sweep", "report -o -", "--version"]


@pytest.mark.parametrize("name", NAMES)
def test_a_closed_standard_output_is_an_error_in_one_line(commands, capsys, monkeypatch, name):
    monkeypatch.setattr(sys, "stdout", None)
    try:
        code = main(commands[name])
    except SystemExit as exc:  # (--help, --version: argparse's own exit)
        code = exc.code
    err = capsys.readouterr().err
    assert code == 1, err
    assert err.endswith("planner-gui: error: cannot write the output (standard output is closed)\n")
    assert "Traceback" not in err and sys.stdout is None


@pytest.mark.parametrize("name", NAMES)
def test_a_full_disk_is_an_error_in_one_line(commands, capsys, monkeypatch, name):
    stream = FullDisk()
    monkeypatch.setattr(sys, "stdout", stream)
    try:
        code = main(commands[name])
    except SystemExit as exc:
        code = exc.code
    err = capsys.readouterr().err
    assert code == 1, err
    assert err.endswith("planner-gui: error: cannot write the output (No space left on device)\n")
    assert sys.stdout is stream


def test_output_that_is_written_is_still_a_success(commands, capsys):
    assert main(commands["run --json"]) == 0
    assert capsys.readouterr().out.lstrip().startswith("{")


def _process(args: list[str], **kw) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "planner_gui", *args], stderr=subprocess.PIPE, text=True, cwd=ROOT, timeout=120, **kw
    )


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_a_process_on_a_full_disk_exits_1_with_one_line():
    with open("/dev/full", "w") as full:
        proc = _process(["run", "--trials", "20"], stdout=full)
    assert proc.returncode == 1, proc.stderr
    assert proc.stderr == "planner-gui: error: cannot write the output (No space left on device)\n"


@pytest.mark.skipif(sys.platform == "win32", reason="closes a file descriptor before exec")
def test_a_process_with_standard_output_closed_exits_1_with_one_line():
    proc = _process(["run", "--help"], preexec_fn=lambda: os.close(1))
    assert proc.returncode == 1, proc.stderr
    assert proc.stderr == "planner-gui: error: cannot write the output (standard output is closed)\n"


def test_a_reader_that_goes_away_stops_the_command_quietly():
    proc = subprocess.Popen(
        [sys.executable, "-m", "planner_gui", "sweep", "--points", "41", "--trials", "20"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=ROOT,
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.readline()
    proc.stdout.close()  # as `| head -1` does
    err = proc.stderr.read().decode()
    proc.stderr.close()
    assert proc.wait(timeout=120) == 0 and "Traceback" not in err and "error" not in err


def test_a_command_with_standard_error_closed_runs_and_keeps_standard_output_clean(tmp_path, monkeypatch):
    """`2>&-`: Python leaves sys.stderr None. A long run's estimate and progress failed (exit 1, nothing said)
    and print(file=None) put a study's status line in standard output. Its lines now go nowhere."""
    monkeypatch.setattr(sys, "stderr", None)
    out = tmp_path / "sweep.csv"
    argv = ["sweep", "--points", "3", "--trials", "20", "-o", str(out)]
    import contextlib

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        assert main(argv) == 0
    assert out.stat().st_size > 0 and "planner-gui:" not in buf.getvalue()
    # And as a real process with its standard error closed, a run long enough to show its progress:
    done = subprocess.run(
        [sys.executable, "-m", "planner_gui", "run", "--gpus", "100000", "--days", "365", "--trials", "2000"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=None,
        preexec_fn=lambda: os.close(2),
        timeout=300,
    )
    assert done.returncode == 0 and b"Unplanned interruptions" in done.stdout and b"planner-gui:" not in done.stdout
