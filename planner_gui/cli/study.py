"""The command ``study``: run a design study (``planner-gui study spec.toml -o results.parquet``) or
summarise one (``planner-gui study --summary results.parquet``)."""

from __future__ import annotations

import argparse
import json
import math
import os
import signal
import sys
import time
from typing import Any, TextIO

from ..core.files.scenario_io import scenario_from_dict, scenario_to_dict
from ..core.study import (
    Backend,
    ResultStore,
    StudyError,
    design_size,
    output_format,
    parse_condition,
    read_results,
    read_spec,
    run_study,
    scenario_doc,
    study_meta,
    study_summary,
)
from ..core.study.runners import check_done, check_scheduler, local_workers, reach_scheduler, scenario_seconds
from ..core.study.store import held, journal_of
from ..core.study.summary import DEFAULT_WHERE, default_least
from ..core.util import fmt
from .flags import EXIT_INTERRUPTED, Parser, UsageError, about, check_output, file_name, integer_arg

__all__ = ["add_parser", "cmd_study"]

#: Show progress once a study has run this long (seconds), then at most this often on a terminal.
PROGRESS_AFTER_S = 2.0
PROGRESS_EVERY_S = 0.5
#: Off a terminal (a log), a plain line at each tenth of the study, and at least this often (seconds).
PLAIN_EVERY_S = 60.0


def add_parser(sub: argparse._SubParsersAction[Parser]) -> None:
    st = sub.add_parser(
        "study",
        help="run many scenarios (a grid, Latin hypercube or Sobol design) and write one row each",
        description="Run a design study from a TOML study file, or summarise its results (see docs/study.md).",
    )
    st.add_argument("spec", nargs="?", type=file_name, metavar="SPEC.toml", help="the study file")
    st.add_argument(
        "--output", "-o", metavar="FILE", type=file_name, help="results file, .parquet or .csv (resumed if it exists)"
    )
    st.add_argument(
        "--scheduler", metavar="tcp://HOST:PORT", help="run on this Dask scheduler's workers instead of this machine"
    )
    st.add_argument(
        "--workers", type=integer_arg, metavar="N", help="local worker processes (default: one per core; 1: this one)"
    )
    st.add_argument("--fresh", action="store_true", help="start over: replace the results file rather than resume it")
    st.add_argument(
        "--show", type=integer_arg, metavar="INDEX", help="print scenario INDEX's scenario file (to run it alone)"
    )
    st.add_argument("--summary", metavar="RESULTS", type=file_name, help="summarise a results file")
    st.add_argument(
        "--where",
        action="append",
        metavar="COLUMN>=VALUE",
        help=f"with --summary: a constraint on the best scenarios (repeatable; default {DEFAULT_WHERE}); "
        "a number's == or != holds to the digits typed (goodput.mean==0.9895: 0.98945 to 0.98955); a text column "
        "takes == or !=, e.g. tiers.fast_placement==same-domain",
    )
    st.add_argument(
        "--least",
        metavar="COLUMN",
        help="with --summary: the column the best scenarios minimise (default: total_cost_usd, the cost to train or "
        "of the window's lost GPU-hours with the spare pool's GPU-hours)",
    )
    st.add_argument("--top", type=integer_arg, default=10, metavar="N", help="with --summary: best scenarios shown")
    st.add_argument("--json", action="store_true", help="with --summary: print one JSON object")


def cmd_study(args: argparse.Namespace) -> int:
    try:
        if args.summary is not None:
            return _summary(args)
        return _run(args)
    except StudyError as exc:
        raise UsageError(str(exc)) from None


# -- running --------------------------------------------------------------------------------------------------


def _run(args: argparse.Namespace) -> int:
    if args.summary is None and args.spec is not None and args.output is not None and args.show is None:
        with held(args.output):
            return _run_held(args)
    return _run_held(args)


def _run_held(args: argparse.Namespace) -> int:
    for flag, given in (("--where", args.where), ("--least", args.least), ("--json", args.json)):
        if given is not None and given is not False:
            raise UsageError(f"{flag}: goes with --summary RESULTS")
    if args.spec is None:
        raise UsageError("study: give a study file (planner-gui study SPEC.toml -o RESULTS) or --summary RESULTS")
    if args.workers is not None and not 1 <= args.workers <= 1024:
        raise UsageError(f"--workers: must be from 1 to 1,024 (got {fmt.number(args.workers)})")
    if args.scheduler is not None:
        if args.workers is not None:
            raise UsageError("--workers: the Dask cluster has its own workers; give --workers or --scheduler")
        check_scheduler(args.scheduler)
    spec = read_spec(args.spec)
    total = design_size(spec)
    if args.show is not None:
        if not 0 <= args.show < total:
            raise UsageError(f"--show: must be a scenario index from 0 to {total - 1:,} (got {fmt.number(args.show)})")
        doc = scenario_to_dict(scenario_from_dict(scenario_doc(spec, args.show)))
        print(json.dumps(doc, indent=2))
        return 0
    if args.output is None:
        raise UsageError("--output: give the results file (-o results.parquet or -o results.csv)")
    output_format(args.output)
    check_output(args.output, "--output")
    _probe_folder(args.output)
    if args.workers is not None and args.workers > local_workers():
        _say(
            f"planner-gui: warning: --workers {args.workers:,} is more than the {local_workers():,} core"
            f"{'s' if local_workers() != 1 else ''} this process may use; they will share them"
        )
    if args.scheduler is not None:
        reach_scheduler(args.scheduler)  # (before the study is announced: a cluster not there is one line)
    backend = Backend(args.workers or 0, args.scheduler)
    store = ResultStore(args.output, study_meta(spec, total), fresh=args.fresh)
    check_done(spec, store)
    for note in store.notes:
        _say(f"planner-gui: note: {note}")
    already = len(store.done)
    shown = fmt.clean(args.output, 120)
    inputs = len(spec.inputs)
    what = (
        f"planner-gui: study '{fmt.clean(spec.name, 60)}': {_n(total, 'scenario')} ({_article(spec.design)} over "
        f"{_n(inputs, 'input')}, {_n(spec.trials, 'trial')} each) on {backend.describe()}"
    )
    if already:
        what += f"; {min(already, total):,} done already"
    estimate = _estimate(spec, [i for i in range(total) if i not in store.done], backend)
    if estimate is not None and total > already:
        what += f"; {estimate}"
    _say(what)
    progress = StudyProgress(sys.stderr)
    t0 = time.monotonic()
    try:
        with _SigtermAsInterrupt():
            ran = run_study(spec, store, backend, progress, lambda text: progress.note(text))
    except KeyboardInterrupt as exc:
        _stopping()  # a second Ctrl-C must not cut short the writing of the results so far
        progress.clear()
        _close(store)
        how = "terminated" if isinstance(exc, Terminated) else "interrupted"
        _say(
            f"planner-gui: {how}: {len(store.done):,} of {total:,} scenarios are in {shown}; "
            "run the same command to go on"
        )
        return EXIT_TERMINATED if isinstance(exc, Terminated) else EXIT_INTERRUPTED
    except BaseException:
        progress.clear()
        _close(store)
        raise
    progress.clear()
    store.close()
    elapsed = time.monotonic() - t0
    if store.mismatches:
        _say(
            f"planner-gui: warning: {_n(len(store.mismatches), 'scenario')} came back twice with different numbers "
            f"(first: {store.mismatches[0]}); the first result was kept"
        )
    if ran == 0 and not store.failed:
        _say(f"planner-gui: every scenario is in {shown} already")
    elif ran:
        rate = ran / elapsed if elapsed > 0 else float("inf")
        _say(f"planner-gui: {_n(ran, 'scenario')} in {elapsed:,.1f} s ({rate:,.1f} per s); results in {shown}")
    if store.failed:
        bad = sorted(store.failed)
        listed = ", ".join(f"{i:,}" for i in bad[:10]) + (", ..." if len(bad) > 10 else "")
        _say(
            f"planner-gui: error: {_n(len(bad), 'scenario')} could not run and {'are' if len(bad) != 1 else 'is'} not "
            f"in the results ({listed}); scenario {bad[0]:,}: {fmt.clean(store.failed[bad[0]], 200)}"
        )
        return EXIT_FAILED
    return 0


#: Exit status when scenarios failed as they ran (the others are in the results), and on SIGTERM.
EXIT_FAILED = 1
EXIT_TERMINATED = 143


def _stopping() -> None:
    """From here to the exit, Ctrl-C and SIGTERM change nothing: the study is already stopping (the pool
    is stopped; the results so far are being written, which takes a moment and must not be cut short)."""
    for sig in (signal.SIGINT, signal.SIGTERM):
        try:
            signal.signal(sig, signal.SIG_IGN)
        except (ValueError, OSError):  # not the main thread
            pass


class Terminated(KeyboardInterrupt):
    """SIGTERM: stops the study as Ctrl-C does (the pool is stopped, the results so far written)."""


class _SigtermAsInterrupt:
    """While a study runs, SIGTERM raises :class:`Terminated` in the main thread (as Ctrl-C raises
    KeyboardInterrupt), so the workers are stopped and the results kept, not left running."""

    def __enter__(self) -> None:
        self.old: Any = None
        try:
            self.old = signal.signal(signal.SIGTERM, self._raise)
        except (ValueError, OSError):  # not the main thread
            self.old = None

    @staticmethod
    def _raise(signum: int, frame: Any) -> None:
        raise Terminated()

    def __exit__(self, *exc: object) -> None:
        if self.old is not None:
            signal.signal(signal.SIGTERM, self.old)


def _close(store: ResultStore) -> None:
    """Close the store on the way out of a failed or stopped run; a failure to write is already reported,
    or is told in one line (the journal is kept)."""
    try:
        store.close()
    except StudyError as exc:
        _say(f"planner-gui: error: {exc}")


def _probe_folder(path: str) -> None:
    """Create and remove a file beside the output, so that a folder that cannot be written is said now, not
    after the first results."""
    folder = os.path.dirname(os.path.abspath(path))
    probe = os.path.join(folder, f".{os.path.basename(path)}.{os.getpid()}.probe")
    try:
        fd = os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            os.write(fd, b"x")
        finally:
            os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise UsageError(
            f"--output: cannot write in {fmt.clean(folder, 120)} ({fmt.clean(exc.strerror or str(exc), 120)})"
        ) from None


def _n(count: int, noun: str) -> str:
    """``1 scenario``, ``2 scenarios``."""
    return f"{count:,} {noun}{'s' if count != 1 else ''}"


def _article(design: str) -> str:
    return {"lhs": "a Latin hypercube", "sobol": "a Sobol design", "grid": "a grid"}.get(design, design)


#: Scenarios whose cost the time estimate adds up (spread over those left to run).
ESTIMATE_SAMPLE = 200


def _estimate(spec: Any, pending: list[int], backend: Backend) -> str | None:
    """``about 4 min`` for the scenarios left, from the engine's cost model of each (of a spread sample of
    them, scaled up), time to train included, over the local workers (None when quick, or on a cluster,
    whose size is not known here)."""
    if backend.scheduler is not None or not pending:
        return None
    step = max(1, len(pending) // ESTIMATE_SAMPLE)
    picks = pending[::step]
    seconds = sum(scenario_seconds(spec, i) for i in picks) * len(pending) / len(picks)
    workers = min(backend.workers or local_workers(), local_workers(), len(pending))
    left = seconds / max(1, workers)
    return f"{about(left)} (Ctrl-C stops it; run again to go on)" if left >= 3 else None


def _say(text: str) -> None:
    try:
        print(text, file=sys.stderr, flush=True)
    except (OSError, ValueError):
        pass


class StudyProgress:
    """Done / total, the rate and the time left, on stderr: one line rewritten on a terminal, else a line
    at each tenth of the study and at least once a minute."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        try:
            self.tty = bool(stream.isatty())
        except (AttributeError, ValueError, OSError):
            self.tty = False
        self.t0 = time.monotonic()
        self.last = self.t0
        self.width = 0
        self.next_tenth = 1

    def _write(self, text: str) -> None:
        try:
            self.stream.write(text)
            self.stream.flush()
        except (OSError, ValueError):
            pass

    def line(self, done: int, total: int, start: int) -> str:
        elapsed = time.monotonic() - self.t0
        ran = done - start
        rate = ran / elapsed if elapsed > 0 else 0.0
        text = f"planner-gui: {done:,}/{total:,} scenarios, {rate:,.1f} per s"
        if rate > 0 and done < total:
            text += f", {about((total - done) / rate)} left"
        return text

    def note(self, text: str) -> None:
        """A line of its own (the progress line, on a terminal, is cleared first and comes back next time)."""
        self.clear()
        self._write(f"planner-gui: {text}\n")

    def __call__(self, done: int, total: int, start: int) -> None:
        now = time.monotonic()
        if now - self.t0 < PROGRESS_AFTER_S or done >= total:
            return
        if self.tty:
            if now - self.last < PROGRESS_EVERY_S:
                return
            self.last = now
            text = self.line(done, total, start)
            self._write("\r" + text.ljust(self.width))
            self.width = len(text)
        elif done * 10 >= self.next_tenth * total or now - self.last >= PLAIN_EVERY_S:
            while done * 10 >= self.next_tenth * total:
                self.next_tenth += 1
            self.last = now
            self._write(self.line(done, total, start) + "\n")

    def clear(self) -> None:
        if self.width:
            self._write("\r" + " " * self.width + "\r")
            self.width = 0


# -- summary ----------------------------------------------------------------------------------------------


def _summary(args: argparse.Namespace) -> int:
    for flag, given in (
        ("SPEC", args.spec),
        ("--output", args.output),
        ("--scheduler", args.scheduler),
        ("--workers", args.workers),
        ("--show", args.show),
    ):
        if given is not None:
            raise UsageError(f"{flag}: --summary reads a results file; it runs nothing")
    if args.fresh:
        raise UsageError("--fresh: --summary reads a results file; it runs nothing")
    if not 1 <= args.top <= 10_000:
        raise UsageError(f"--top: must be from 1 to 10,000 (got {fmt.number(args.top)})")
    res = read_results(args.summary)
    if res.rows == 0 and res.note:  # not one row is a result: that is the error
        raise UsageError(res.note)
    if res.note:
        _say(f"planner-gui: note: {res.note}")
    journal = journal_of(res.path)
    if journal.exists():
        _say(
            f"planner-gui: note: {fmt.clean(journal.name, 80)} beside it holds results not in it yet (a run that was "
            "stopped): run the study again to add them"
        )
    if res.rows == 0:
        raise UsageError(f"{fmt.clean(args.summary, 120)}: no scenario has finished yet")
    where = [parse_condition(w, res) for w in (args.where or [DEFAULT_WHERE])]
    least = default_least(res) if args.least is None else args.least
    doc = study_summary(res, where, least, args.top)
    if args.json:
        print(json.dumps(doc, indent=2, allow_nan=False))
    else:
        print(summary_text(doc))
    return 0


def _is_share(column: str) -> bool:
    """A column of goodput (a share of the window, 0 to 1)."""
    return column.startswith(("goodput.", "goodput_"))


def _num(v: Any, column: str = "") -> str:
    """A cell of the summary's table: dollars with "$", shares in fixed point (never "3.148e-08")."""
    if v is None:
        return "-"
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return fmt.clean(str(v), 30)
    if column.endswith("_usd") and math.isfinite(v):
        return f"-${-v:,.0f}" if v < 0 else f"${v:,.0f}"
    if _is_share(column) and math.isfinite(v):
        return f"{v:.4f}"
    if isinstance(v, int):
        return f"{v:,}"
    if abs(v) >= 1e4:
        return f"{v:,.0f}" if abs(v) < 1e15 else f"{v:.4g}"
    return f"{v:.4g}"


def summary_text(doc: dict[str, Any]) -> str:
    """The readable summary of a study."""
    lines = [
        f"Study '{fmt.clean(doc['study'], 80)}': {doc['done']:,} of {doc['scenarios']:,} scenarios done "
        f"({_article(doc['design'])} over {_n(len(doc['inputs']), 'input')}, {_n(doc['trials'], 'trial')} each)"
    ]
    r, out = doc["range"], doc["output"]
    if r["min"] is not None:
        lo, hi, mean = (_num(float(r[k]), out) for k in ("min", "max", "mean"))
        lines.append(f"{out} over the scenarios: {lo} to {hi}, mean {mean}")
    s = doc["sobol"]
    if s is not None:
        width = max(12, *(len(n) for n in s["inputs"]))
        lines.append(
            f"Sobol indices of {s['output']} ({s['base_samples']:,} base samples; +/- the 95% bootstrap interval):"
        )
        lines.append(f"  {'input':<{width}}  {'first-order':>16}  {'total':>16}")
        for name, v in sorted(s["inputs"].items(), key=lambda kv: -kv[1]["total"]):
            s1 = f"{v['first_order']:.3f} +/- {v['first_order_conf']:.3f}"
            st = f"{v['total']:.3f} +/- {v['total_conf']:.3f}"
            lines.append(f"  {fmt.clean(name, 60):<{width}}  {s1:>16}  {st:>16}")
        lines.append(
            "  first-order: the share of the variance the input explains alone; total: with all its interactions"
        )
        if s.get("caution"):
            lines.append(f"Caution: these indices are not reliable: {s['caution']}")
    else:
        lines.append(f"No Sobol indices: {doc['sobol_note']}")
    b = doc["best"]
    cond = " and ".join(b["where"]) or "no constraint"
    lines.append(
        f"Best scenarios with {cond}, least {b['least']} first: {b['meeting']:,} of {doc['done']:,} meet "
        f"{'it' if len(b['where']) <= 1 else 'them'}"
    )
    if b["scenarios"]:
        cols = [c for c in b["scenarios"][0] if c != "seed"]  # the seed is in --json and in --show
        cells = [[_num(row[c], c) for c in cols] for row in b["scenarios"]]
        widths = [max(len(c), *(len(r[i]) for r in cells)) for i, c in enumerate(cols)]
        lines.append("  " + "  ".join(c.rjust(w) for c, w in zip(cols, widths)))
        lines += ["  " + "  ".join(v.rjust(w) for v, w in zip(r, widths)) for r in cells]
    return "\n".join(lines)
