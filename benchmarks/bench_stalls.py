"""The longest stall of the window's event loop in the views that read large files or compute on a thread.

Each case runs in a process of its own (so its peak memory is its own) and prints the longest gap between
the ticks of a 5 ms timer on the GUI thread (target: none over 50 ms), how long the work took, and the
process's peak resident memory:

* a study results file of 1,000,000 rows (Parquet), opened in the study window (building the window is
  reported apart: opening it), read and shown, then every choice of the heatmap's inputs and output made in turn;
* the same for 300,000 rows of CSV;
* Spare-Pool Sizing at 100,000 GPUs over 365 days, from opening to its curves drawn;
* both spares dialogs (Spare-Pool Sizing, Repairs and Recovery Modes) open and computing at 100,000 GPUs
  while the sizing dialog's swap time and the window's restart slider are moved at 30 Hz (and, apart, the
  longest stall of opening them: building and first painting their plots);
* opening each window of the View and File menus alone at 100,000 GPUs (Spare-Pool Sizing, Repairs and
  Recovery Modes, Recovery Strategies, a small study's results, an incident log, Model and Sources), from its
  menu action through its first second on screen: the longest stall of each;
* "Use as scenario" of an incident log of 180 causes in 180 categories (a log of a large fleet's own names):
  the inputs panel rebuilding its rows for them, through two seconds on screen.

Run: ``python benchmarks/bench_stalls.py [--case NAME] [--rows N]`` (``--rows`` scales the study files).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
CASES = ("study-parquet", "study-csv", "sizing", "spares-dialogs", "opening", "incident-scenario")
#: Causes (each in a category of its own) of the incident log of the case "incident-scenario".
CAUSES = 180
ROWS = {"study-parquet": 1_000_000, "study-csv": 300_000}

SPEC = """
[study]
name = "large study"
preset = "llama3-405b"
design = "lhs"
samples = {rows}
trials = 20

[vary]
gpus = {{ min = 8192, max = 1048576, scale = "log" }}
detect_min = {{ min = 1, max = 30 }}
checkpoint_write_s = {{ min = 1, max = 600, scale = "log" }}
checkpoint_interval_min = ["optimal", 30, 120]
"""


def write_study(folder: Path, rows: int, form: str) -> Path:
    """A results file as ``planner-gui study`` writes it: its inputs the design's at each index (a row that is
    not its design's is set aside when read), its outputs made up (the window's reading and drawing are
    measured, not the study's numbers)."""
    from planner_gui.core.study import design_size, read_spec, study_meta
    from planner_gui.core.study.design import unit_points
    from planner_gui.core.study.store import CSV_MARK, META_KEY, SHARE_OUTPUTS, _values_at, input_cell

    spec_path = folder / "study.toml"
    spec_path.write_text(SPEC.format(rows=rows))
    spec = read_spec(spec_path)
    meta = study_meta(spec, design_size(spec))
    rng = np.random.default_rng(1)
    u = unit_points(spec)
    design: dict[str, object] = {}
    for k, inp in enumerate(spec.inputs):
        values, at = _values_at(inp, u[:, k])
        cells = [input_cell(inp, v) for v in values]
        design[inp.name] = [cells[i] for i in at] if not inp.numeric else np.asarray(cells)[at]
    columns: dict[str, object] = {}
    for c in meta["columns"]:
        if c in ("index", "seed"):
            columns[c] = np.arange(rows, dtype=np.int64)
        elif c in design:
            columns[c] = design[c]
        elif c in SHARE_OUTPUTS:
            columns[c] = rng.uniform(0.5, 1.0, rows)
        else:
            columns[c] = rng.uniform(1.0, 1e6, rows)
    path = folder / f"results.{form}"
    if form == "parquet":
        import pyarrow as pa
        import pyarrow.parquet as pq

        types = {"int": pa.int64(), "float": pa.float64(), "text": pa.string()}
        schema = pa.schema(
            [pa.field(c, types[k]) for c, k in meta["columns"].items()], metadata={META_KEY: json.dumps(meta)}
        )
        arrays = [pa.array(columns[c], type=types[k]) for c, k in meta["columns"].items()]
        pq.write_table(pa.Table.from_arrays(arrays, schema=schema), path)
    else:
        names = list(meta["columns"])
        cells = [
            [str(v) for v in columns[c]] if isinstance(columns[c], list) else [repr(v) for v in columns[c].tolist()]
            for c in names
        ]
        with path.open("w") as fh:
            fh.write(CSV_MARK + json.dumps(meta) + "\n")
            fh.write(",".join(names) + "\n")
            for line in zip(*cells, strict=True):
                fh.write(",".join(line) + "\n")
    return path


def run_case(name: str, file: Path | None) -> None:
    from bench_gui import StallMonitor, _TracingApp, pump
    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance() or (_TracingApp if os.environ.get("TRACE_STALLS") else QApplication)(sys.argv[:1])
    app.setOrganizationName("planner-gui-bench")
    QSettings().clear()
    monitor = StallMonitor()
    if file is not None:
        from planner_gui.ui.study_view import open_study

        base = _peak_mb()
        t0 = time.perf_counter()
        view = open_study(file)  # building the window, on the window's thread (reported apart: opening it)
        opening = round((time.perf_counter() - t0) * 1e3)
        monitor.start()
        while view.loading:
            pump(5)
        loaded = time.perf_counter() - t0
        load_stall = monitor.stop()
        monitor.start()
        t1 = time.perf_counter()
        choices = 0
        for out in [view.out_box.itemText(i) for i in range(view.out_box.count())][:6]:
            for x in [view.x_box.itemText(i) for i in range(view.x_box.count())]:
                view.x_box.setCurrentText(x)
                view.out_box.setCurrentText(out)
                pump(1)
                choices += 1
        changes = time.perf_counter() - t1
        change_stall = monitor.stop()
        rows = view.results.rows if view.results is not None else 0
        view.close()
        print(
            f"{name}: {rows:,} rows ({file.stat().st_size / 1e6:.0f} MB): read and shown in {loaded:.1f} s, longest "
            f"stall {load_stall} ms (opening the window: {opening} ms); {choices} choices of input and output in "
            f"{changes:.2f} s, longest stall {change_stall} ms (target: 50 ms); peak memory {_peak_mb():.0f} MB "
            f"({_peak_mb() - base:.0f} MB over the window's {base:.0f} MB)"
        )
        return
    from planner_gui.core.files.presets import load_preset
    from planner_gui.core.model.spares import Spares
    from planner_gui.ui import MainWindow

    if name == "opening":
        open_each(monitor)
        return
    if name == "incident-scenario":
        use_incident_log(monitor)
        return
    sc = load_preset("llama3-405b").replace(gpus=100_000, spares=Spares(spare_nodes=89, swap_min=10))
    if name == "sizing":
        sc = sc.replace(days=365)
    win = MainWindow(sc, restore=False)
    win.show()
    deadline = time.monotonic() + 120
    while not win.results_current() and time.monotonic() < deadline:
        pump(20)
    from planner_gui.ui.spares_view import SparesDialog

    opened = StallMonitor()
    opened.start()  # opening the dialogs: building and first painting their plots, on the window's thread
    t0 = time.perf_counter()
    sizing = SparesDialog(win.scenario(), win)
    sizing.show()
    dialogs = [sizing]
    if name == "spares-dialogs":
        dialogs.append(win.show_spares_modes())
    pump(500)
    opening = opened.stop()
    monitor.start()
    if name == "spares-dialogs":  # editing while both compute: the sizing dialog's swap time, the window's restart
        restart = win.controls.values["restart_min"].slider
        swap = sizing.controls["swap_min"]
        moves = 0
        while time.perf_counter() - t0 < 6.0:
            restart.setValue(restart.value() + (1 if moves % 2 else -1))
            swap.setValue(swap.value() + (0.5 if moves % 2 else -0.5))
            moves += 1
            pump(33)
    while sizing.sizing_result is None and time.perf_counter() - t0 < 300:
        pump(20)
    took = time.perf_counter() - t0
    stall = monitor.stop()
    for d in dialogs:
        d.close()
    win._confirm_discard = lambda: True
    win.close()
    pump(200)  # (their compute processes' controllers are deleted later, by the event loop)
    what = "sizing" if name == "sizing" else "both dialogs computing while their inputs and the window's change"
    print(
        f"{name}: {sc.gpus:,} GPUs, {sc.days:g} days: {what} {took:.1f} s, longest stall {stall} ms (target: 50 "
        f"ms; opening the dialogs: {opening} ms); peak memory {_peak_mb():.0f} MB"
    )


def open_each(monitor) -> None:
    """Each window of the menus opened alone, from its action (on the event loop, as a click is), then a second
    on screen: the longest stall of each."""
    from bench_gui import pump
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication

    from planner_gui.core.files.presets import load_preset
    from planner_gui.core.model.spares import Spares
    from planner_gui.ui import MainWindow

    sc = load_preset("llama3-405b").replace(gpus=100_000, spares=Spares(spare_nodes=89, swap_min=10))
    win = MainWindow(sc, restore=False)
    win.show()
    deadline = time.monotonic() + 120
    while not win.results_current() and time.monotonic() < deadline:
        pump(20)
    tmp = Path(tempfile.mkdtemp())
    study = write_study(tmp, 2_000, "csv")
    log = ROOT / "docs" / "examples" / "incidents.csv"
    openers = {
        "Spare-Pool Sizing": win.show_spares_sizing,
        "Repairs and Recovery Modes": win.show_spares_modes,
        "Recovery Strategies": win.show_strategies,
        "study results (2,000 rows)": lambda: win.open_study_results(study),
        "incident log (docs/examples)": lambda: win.import_incident_log(log),
        "Model and Sources": win.show_model,
    }
    worst = {}
    for what, opener in openers.items():
        for _ in range(3):
            before = set(QApplication.topLevelWidgets())
            pump(300)
            monitor.start()
            QTimer.singleShot(0, opener)
            pump(1000)
            worst[what] = max(worst.get(what, 0), monitor.stop())
            for w in set(QApplication.topLevelWidgets()) - before:
                if w.isVisible():
                    w.close()
            pump(300)
    win._confirm_discard = lambda: True
    win.close()
    pump(200)
    print("opening: longest stall from the menu action through a second on screen, worst of 3 (target: 50 ms):")
    for what, ms in worst.items():
        print(f"  {what:<30} {ms:4d} ms")


def use_incident_log(monitor) -> None:
    """An incident log of :data:`CAUSES` causes fitted, then "Use as scenario" clicked: the longest stall from the
    click through two seconds on screen."""
    from bench_gui import pump
    from PySide6.QtCore import QTimer

    from planner_gui.ui import MainWindow

    win = MainWindow(restore=False)
    win.show()
    pump(500)
    rng = np.random.default_rng(1)
    lines = ["timestamp,component,category,gpus_affected"]
    for day in range(60):
        for cause in rng.choice(CAUSES, size=6, replace=False):
            lines.append(
                f"2025-01-{1 + day % 28:02d}T{day % 24:02d}:{int(cause) % 60:02d}:00Z,cause {cause},kind {cause},8"
            )
    log = Path(tempfile.mkdtemp()) / "fleet.csv"
    log.write_text("\n".join(lines) + "\n")
    dlg = win.import_incident_log(log)
    dlg.gpus.setValue(100_000)
    deadline = time.monotonic() + 60
    while not dlg.use_button.isEnabled() and time.monotonic() < deadline:
        pump(20)
    causes = len(dlg.fit.components) if dlg.fit is not None else 0
    if not causes:
        print("no fit:", dlg.status.text())
    win._confirm_discard = lambda: True
    monitor.start()
    t0 = time.perf_counter()
    QTimer.singleShot(0, dlg.use_button.click)
    while not getattr(win.controls, "rows_ready", True) or time.perf_counter() - t0 < 2.0:
        pump(20)
    stall = monitor.stop()
    rows = len(win.controls.comp_rows)
    win.close()
    pump(200)
    print(
        f"incident-scenario: {causes} causes fitted, 'Use as scenario': {rows} rows of rates, longest stall {stall} "
        f"ms through two seconds (target: 50 ms)"
    )


def _peak_mb() -> float:
    """This process's peak resident memory (VmHWM: unlike ru_maxrss, not inherited from the parent)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--case", choices=CASES)
    parser.add_argument("--file", type=Path, help=argparse.SUPPRESS)  # (a case's study file, written before)
    parser.add_argument("--rows", type=int, default=0, help="rows of the study files (default: 1M / 300k)")
    args = parser.parse_args()
    if args.case and (args.file or not args.case.startswith("study")):
        sys.path.insert(0, str(Path(__file__).parent))
        run_case(args.case, args.file)
        return 0
    status = 0
    with tempfile.TemporaryDirectory() as tmp:
        for case in [args.case] if args.case else CASES:
            argv = [sys.executable, __file__, "--case", case]
            if case.startswith("study"):  # written here, so the case's memory is the window's reading alone
                form = "parquet" if case == "study-parquet" else "csv"
                argv += ["--file", str(write_study(Path(tmp), args.rows or ROWS[case], form))]
            status |= subprocess.run(argv, check=False).returncode
    return status


if __name__ == "__main__":
    sys.exit(main())
