"""Study results on disk: one row per scenario, as Parquet or CSV, written as they arrive and resumable.

Rows are first appended to a journal beside the output (``results.parquet.journal``, one JSON line per
row, flushed as each arrives), and the output file is rewritten from every row received, atomically, every
few seconds and at the end (so it always opens, and always holds whole rows). The journal is removed once
the output holds every row it had. A killed run leaves the journal; the next run of the same study reads
the output and the journal and skips the scenarios they hold. Every row read back is checked
(:func:`row_problem`; journal rows also by their :func:`row_check`): one that fails is set aside, to run
again, and said in ``ResultStore.notes``; a journal that needed that is folded into the output and started
anew (:meth:`ResultStore._repair`), so that results and journal are never both at risk.

Rows are keyed by their scenario's index: a row that arrives twice (a task a cluster ran again after
losing its worker) is kept once.

The output's metadata (Parquet key ``planner_gui.study``; in CSV, a first line ``# planner-gui study
{...}``) records the study: its file, design, inputs and a fingerprint that a resumed run must match.
"""

from __future__ import annotations

import array
import contextlib
import csv
import errno
import hashlib
import io
import json
import math
import os
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeGuard

import numpy as np

from ... import __version__
from ..util.fmt import clean
from ..util.userfiles import FileRefused, open_regular, write_atomic
from .spec import DESIGNS, MAX_INPUTS, MAX_SCENARIOS, Input, StudyError, StudySpec, missing_package
from .worker import OUTPUTS, TOTAL_COST

__all__ = [
    "CSV_MARK",
    "META_KEY",
    "ResultStore",
    "StudyResults",
    "Texts",
    "column_kinds",
    "fingerprint",
    "held",
    "journal_of",
    "output_format",
    "read_results",
    "study_meta",
]

#: The Parquet metadata key of the study's description.
META_KEY = b"planner_gui.study"
#: The start of a CSV results file's first line (the study's description follows, as JSON).
CSV_MARK = "# planner-gui study "
#: Version of the results layout.
RESULTS_FORMAT = 1
#: Rewrite the output at most this often while a study runs (seconds).
REWRITE_EVERY_S = 5.0
#: Sync the journal to disk at most this often (seconds).
SYNC_EVERY_S = 1.0
#: The key of a journal row's check: a hash of the study's fingerprint and the row, so that a row edited or
#: damaged on disk, or one of another study, is told from one this study computed (:func:`row_check`).
CHECK_KEY = "check"
#: The longest line of a journal (bytes): a row of every column is under 4 kB.
MAX_JOURNAL_LINE = 64 * 1024
#: The most bytes a results file or journal may hold per scenario of its study (and this much more for the
#: description): a file over it is not read.
MAX_BYTES_PER_SCENARIO = 16 * 1024
MAX_DESCRIPTION_BYTES = 2 * 1024 * 1024
#: How far below 0 (or above 1, for a share) an output may be from the rounding of sums of floats (hours of
#: -7e-15 are 0).
_ROUNDING = 1e-6
#: Outputs every scenario run has: a row without one is not a result.
REQUIRED_OUTPUTS = (
    "goodput.mean",
    "goodput.p05",
    "goodput.p50",
    "goodput.p95",
    "interruptions.mean",
    "hours.useful",
    "lost_gpu_hours.mean",
)
#: Outputs that are shares (0 to 1); every other output is 0 or more (or empty).
SHARE_OUTPUTS = frozenset(
    {
        "goodput.mean",
        "goodput.sem",
        "goodput.p05",
        "goodput.p50",
        "goodput.p95",
        "goodput_expected",
        "goodput_expected_at_optimal_interval",
        "spares.p_no_spare",
        "spares.p_no_spare_expected",
        "uncertainty.goodput.variance_share_rates",
    }
)


def journal_of(path: str | os.PathLike[str]) -> Path:
    """The journal beside results ``path`` (``results.parquet.journal``)."""
    p = Path(os.fspath(path))
    return p.with_name(p.name + ".journal")


@contextlib.contextmanager
def held(path: str | os.PathLike[str]) -> Iterator[None]:
    """Hold results ``path`` for one run: a second run on the same output (another study, or this one twice)
    is refused in one line instead of both appending to one journal and one overwriting the other's results. The
    hold is a lock on ``.NAME.lock`` beside it, released by the system when the process ends however it ends."""
    try:
        import fcntl
    except ImportError:  # (no advisory locks here: runs are not held apart)
        yield
        return
    p = Path(os.fspath(path))
    lock = p.with_name(f".{p.name}.lock")
    try:
        fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError:
        yield  # (a folder where no lock can be made: the run is not held apart)
        return
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            other = os.read(fd, 32).decode("ascii", "replace").strip()
            raise StudyError(
                f"{clean(str(p), 120)}: another planner-gui study is writing it now"
                f"{f' (process {clean(other, 20)})' if other.isdigit() else ''}; wait for it to end, or write "
                "to another file"
            ) from None
        os.ftruncate(fd, 0)
        os.write(fd, str(os.getpid()).encode())
        try:
            yield
        finally:
            with contextlib.suppress(OSError):
                os.unlink(lock)
    finally:
        os.close(fd)


def output_format(path: str | os.PathLike[str]) -> str:
    """``parquet`` or ``csv``, from the file name's ending."""
    suffix = Path(os.fspath(path)).suffix.lower()
    if suffix in (".parquet", ".pq"):
        return "parquet"
    if suffix == ".csv":
        return "csv"
    raise StudyError(
        f"{clean(os.fspath(path), 120)}: results are written to a .parquet or a .csv file (got '{clean(suffix, 20)}')"
    )


def fingerprint(spec: StudySpec) -> str:
    """A hash of everything that decides the study's scenarios and numbers (and the planner's version)."""
    doc = json.dumps({"version": __version__, "study": spec.to_dict()}, sort_keys=True, default=str)
    return hashlib.sha256(doc.encode()).hexdigest()


def _input_kind(inp: Input) -> str:
    if not inp.numeric:
        return "text"
    if inp.levels is None:
        return "int" if inp.integer else "float"
    return "int" if all(isinstance(v, int) for v in inp.levels) else "float"


#: The end of an output column's name when an input of the study has the output's name (a study varying
#: ``tiers.fast_interval_min`` over "optimal" and numbers also has the interval each scenario used).
USED_SUFFIX = ".used"


def output_columns(spec: StudySpec) -> list[str]:
    """The output columns of ``spec``'s results, in order: each output's name, or with :data:`USED_SUFFIX` where an
    input of the study has that name (the input's column keeps what the study file asked for)."""
    inputs = {i.name for i in spec.inputs}
    return [f"{c}{USED_SUFFIX}" if c in inputs else c for c in (*(c for c, _ in OUTPUTS), TOTAL_COST)]


def output_cells(spec: StudySpec, outputs: dict[str, Any]) -> dict[str, Any]:
    """A scenario's outputs (as :func:`.worker.run_one` gives them) under their columns' names."""
    inputs = {i.name for i in spec.inputs}
    return {f"{c}{USED_SUFFIX}" if c in inputs else c: v for c, v in outputs.items()}


def column_kinds(spec: StudySpec) -> dict[str, str]:
    """Every column of the results and its kind (int, float or text), in order (an input varying ``seed`` is
    the seed column)."""
    kinds = {"index": "int", "seed": "int"}
    kinds |= {i.name: _input_kind(i) for i in spec.inputs}
    kinds |= {c: "float" for c in output_columns(spec)}
    return kinds


def study_meta(spec: StudySpec, total: int) -> dict[str, Any]:
    """The description stored with the results."""
    return {
        "format": RESULTS_FORMAT,
        "version": __version__,
        "fingerprint": fingerprint(spec),
        "total": total,
        "study": spec.to_dict(),
        "spec_toml": spec.text,
        "columns": column_kinds(spec),
        "inputs": [i.name for i in spec.inputs],
        "outputs": output_columns(spec),
    }


def input_cell(inp: Input, value: Any) -> Any:
    """An input's value as its column stores it (text columns hold numbers and true/false as JSON)."""
    if inp.numeric:
        return value
    return value if isinstance(value, str) else json.dumps(value)


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return bool(a == b)


def row_check(fingerprint_: str, row: dict[str, Any]) -> str:
    """The check of a journal row: 16 hex digits of a hash of the study's fingerprint and the row's cells
    (its own check left out)."""
    cells = {k: v for k, v in row.items() if k != CHECK_KEY}
    text = fingerprint_ + json.dumps(cells, sort_keys=True, allow_nan=True, separators=(",", ":"))
    return hashlib.blake2b(text.encode(), digest_size=8).hexdigest()


def _is_int(v: Any) -> TypeGuard[int]:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_num(v: Any) -> TypeGuard[float]:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _shown(v: Any) -> str:
    try:
        return clean(json.dumps(v, allow_nan=True), 40)
    except (TypeError, ValueError, RecursionError):
        return type(v).__name__


def row_problem(row: Any, meta: dict[str, Any]) -> str | None:
    """Why ``row`` is not a result of the study that ``meta`` describes (one line), or None: every column of
    the study and no other, of its kind, the index within the design, the seed a seed, each output a number
    of its range (shares 0 to 1, the rest 0 or more) or empty."""
    if not isinstance(row, dict):
        return f"not a row of cells ({_shown(row)})"
    kinds: dict[str, str] = meta["columns"]
    extra = next((k for k in row if k not in kinds and k != CHECK_KEY), None)
    if extra is not None:
        return f"'{clean(str(extra), 40)}' is not a column of this study"
    missing = next((k for k in kinds if k not in row), None)
    if missing is not None:
        return f"no {missing}"
    index, seed = row["index"], row["seed"]
    if not _is_int(index) or not 0 <= index < int(meta["total"]):
        return f"index {_shown(index)} is not a scenario of this study (0 to {int(meta['total']) - 1:,})"
    if not _is_int(seed) or not 0 <= seed < 2**63:
        return f"seed {_shown(seed)} is not a seed (a whole number from 0 to 2**63 - 1)"
    outputs = set(meta["outputs"])
    for c, kind in kinds.items():
        v = row[c]
        if c in ("index", "seed"):
            continue
        if c in outputs:
            if v is None:
                if c in REQUIRED_OUTPUTS:
                    return f"{c} is empty (every scenario run has one)"
                continue
            if not _is_num(v) or not math.isfinite(v) or v < -_ROUNDING or (c in SHARE_OUTPUTS and v > 1 + _ROUNDING):
                what = "a share from 0 to 1" if c in SHARE_OUTPUTS else "a finite number, 0 or more"
                return f"{c} is {_shown(v)}, not {what}"
        elif kind == "text":
            if not isinstance(v, str) or len(v) > 10_000:
                return f"{c} is {_shown(v)}, not a text"
        elif not (_is_int(v) if kind == "int" else _is_num(v) and math.isfinite(v)):
            return f"{c} is {_shown(v)}, not {'a whole number' if kind == 'int' else 'a finite number'}"
    return None


class Texts(Sequence[Any]):
    """A column of text read back: each row's text as a number (``codes``) into the texts found (``levels``).

    A sequence of the rows' texts, as the list it stands for (equal to that list). Held this way, a column of a
    million rows is two arrays rather than a million objects: it pickles in a few milliseconds (the window gets
    study results from a compute process, and a million texts unpickled on its reading thread held the lock the
    window paints with for 90 ms) and takes a twelfth of the memory.
    """

    __slots__ = ("codes", "levels")

    def __init__(self, codes: np.ndarray, levels: Sequence[Any]) -> None:
        self.codes = np.asarray(codes, dtype=np.int32)
        self.levels = tuple(levels)

    @classmethod
    def of(cls, values: Iterable[Any]) -> Texts:
        """The column of ``values`` (texts, or None for an empty cell), levels in the order first met."""
        found: dict[Any, int] = {}
        codes = array.array("i", (found.setdefault(v, len(found)) for v in values))
        return cls(np.frombuffer(codes, dtype=np.int32) if len(codes) else np.zeros(0, np.int32), list(found))

    def __len__(self) -> int:
        return len(self.codes)

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, (int, np.integer)):
            return self.levels[self.codes[i]]
        return Texts(self.codes[i], self.levels)  # a slice, a mask or rows: a column again

    def __iter__(self) -> Iterator[Any]:
        levels = self.levels
        return (levels[k] for k in self.codes.tolist())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Texts | list | tuple):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        head = ", ".join(repr(v) for v in self[: min(len(self), 5)])
        return f"Texts([{head}{', ...' if len(self) > 5 else ''}], {len(self):,} rows)"

    def tolist(self) -> list[Any]:
        return list(self)


@dataclass
class StudyResults:
    """Study results read back: the description and one array (:class:`Texts` for text) per column."""

    meta: dict[str, Any]
    columns: dict[str, Any]
    path: Path
    #: What is computed from the columns once and asked for again (each input's heatmap cells, see
    #: :func:`.summary.cells`): the window computes it on its reading thread, so choices cost nothing after.
    derived: dict[Any, Any] = field(default_factory=dict, repr=False, compare=False)
    #: Rows of the file that are not results (a goodput above 1, an empty goodput, an infinite output...): how
    #: many, and why the first is not; they are left out of ``columns``.
    set_aside: tuple[int, str] = (0, "")

    @property
    def note(self) -> str:
        """One line on the rows set aside ("" when none were)."""
        count, why = self.set_aside
        if not count:
            return ""
        return f"{clean(self.path.name, 80)}: {count:,} row{'s' if count != 1 else ''} set aside, not results ({why})"

    def once(self, key: Any, make: Callable[[], Any]) -> Any:
        """``make()``, computed the first time ``key`` is asked for."""
        if key not in self.derived:
            self.derived[key] = make()
        return self.derived[key]

    @property
    def rows(self) -> int:
        return len(self.columns["index"])

    @property
    def total(self) -> int:
        return int(self.meta["total"])

    @property
    def inputs(self) -> list[str]:
        return list(self.meta["inputs"])

    @property
    def outputs(self) -> list[str]:
        return list(self.meta["outputs"])

    @property
    def design(self) -> str:
        return str(self.meta["study"]["design"])

    @property
    def name(self) -> str:
        return str(self.meta["study"]["name"])

    def numeric(self, column: str) -> np.ndarray | None:
        """A column as floats (None for a text column)."""
        if column not in self.columns or self.meta["columns"].get(column) == "text":
            return None
        return np.asarray(self.columns[column], dtype=float)

    def input_spec(self, name: str) -> dict[str, Any]:
        return next(d for d in self.meta["study"]["inputs"] if d["name"] == name)


# -- writing ----------------------------------------------------------------------------------------------


def _to_parquet(meta: dict[str, Any], rows: list[dict[str, Any]]) -> bytes:
    import pyarrow as pa
    import pyarrow.parquet as pq

    types = {"int": pa.int64(), "float": pa.float64(), "text": pa.string()}
    kinds: dict[str, str] = meta["columns"]
    schema = pa.schema([pa.field(c, types[k]) for c, k in kinds.items()], metadata={META_KEY: json.dumps(meta)})
    arrays = [pa.array([r.get(c) for r in rows], type=types[k]) for c, k in kinds.items()]
    buf = io.BytesIO()
    pq.write_table(pa.Table.from_arrays(arrays, schema=schema), buf)
    return buf.getvalue()


def _cell(v: Any) -> str:
    if v is None:
        return ""
    if isinstance(v, float):
        return repr(v)
    return str(v)


def _to_csv(meta: dict[str, Any], rows: list[dict[str, Any]]) -> str:
    out = io.StringIO()
    out.write(CSV_MARK + json.dumps(meta) + "\n")
    w = csv.writer(out, lineterminator="\n")
    cols = list(meta["columns"])
    w.writerow(cols)
    for r in rows:
        w.writerow([_cell(r.get(c)) for c in cols])
    return out.getvalue()


def _write(path: Path, meta: dict[str, Any], rows: list[dict[str, Any]]) -> None:
    data: str | bytes = _to_parquet(meta, rows) if output_format(path) == "parquet" else _to_csv(meta, rows)
    try:
        write_atomic(path, data)
    except OSError as exc:
        raise StudyError(
            f"{clean(str(path), 120)}: cannot write ({clean(exc.strerror or str(exc), 120)}); the results so far are "
            "kept in its journal: free space or fix the folder and run the same command to go on"
        ) from None


class ResultStore:
    """The rows of one study: those already on disk (output and journal), and those arriving."""

    def __init__(self, path: str | os.PathLike[str], meta: dict[str, Any], *, fresh: bool = False) -> None:
        self.path = Path(os.fspath(path))
        if output_format(self.path) == "parquet":
            try:
                import pyarrow.parquet  # noqa: F401 - refuse now, not after the first results
            except ImportError as exc:
                raise StudyError(
                    f"{clean(self.path.name, 80)}: writing Parquet needs {missing_package(exc)}; or write CSV "
                    "(-o results.csv)"
                ) from None
        self.journal_path = journal_of(self.path)
        self.meta = meta
        self.done: dict[int, dict[str, Any]] = {}
        self.duplicates = 0
        self.mismatches: list[int] = []
        self.broken = False  # a write failed: close() keeps the journal and the output as they are
        self.failed: dict[int, str] = {}  # scenarios that could not run this time (not recorded; a re-run tries them)
        self.notes: list[str] = []  # rows on disk that were set aside (to run again), each file's in one line
        self._journal: Any = None
        self._last_write = time.monotonic()
        self._last_sync = time.monotonic()
        self._dirty = False
        if fresh:
            for p in (self.journal_path,):
                try:
                    p.unlink()
                except FileNotFoundError:
                    pass
        else:
            self._load()

    # -- what is there ------------------------------------------------------------------------------
    def _check_meta(self, other: dict[str, Any], where: Path) -> None:
        if other.get("fingerprint") != self.meta["fingerprint"]:
            why = (
                f"planner-gui {other.get('version')}, this is {__version__}"
                if other.get("version") != __version__
                else "another study file, design or base scenario"
            )
            raise StudyError(
                f"{clean(str(where), 120)}: holds the results of another study ({why}); use another output file, "
                "or --fresh to start over"
            )

    def _load(self) -> None:
        if self.path.exists():
            res = read_results(self.path)
            self._check_meta(res.meta, self.path)
            cols = list(res.columns)
            for i in range(res.rows):  # (every row was checked as it was read: those that fail are set aside)
                row = {c: _plain(res.columns[c][i]) for c in cols}
                self.done[int(row["index"])] = row
            self._reject(self.path, *res.set_aside, "rows")
        if (self.journal_path.exists() or self.journal_path.is_symlink()) and self._read_journal():
            self._repair()

    def _reject(self, where: Path, count: int, first: str, what: str) -> None:
        """One note: ``count`` rows (or lines) of ``where`` set aside, and why the first was."""
        if count:
            self.notes.append(
                f"{clean(where.name, 80)}: {count:,} {what[:-1] if count == 1 else what} set aside and "
                f"run again ({first}{'; ...' if count > 1 else ''})"
            )

    def _read_journal(self) -> bool:
        """Read the journal's rows into ``done``; True when the journal needs repair (a damaged first line, a
        line cut short, or rows set aside: the good rows are then written to the output, and the journal
        started anew, so that a second crash finds whole lines)."""
        limit = MAX_DESCRIPTION_BYTES + MAX_BYTES_PER_SCENARIO * int(self.meta["total"])
        where = clean(str(self.journal_path), 120)
        try:
            fh = open_regular(self.journal_path, limit)
        except FileRefused as exc:
            raise StudyError(f"{where}: cannot read ({exc}); move it aside to run those scenarios again") from None
        except OSError as exc:
            raise StudyError(f"{where}: cannot read ({clean(exc.strerror or str(exc), 80)})") from None
        fp = self.meta["fingerprint"]
        bad: list[str] = []
        damaged_head = torn = False
        read = 0
        with fh:
            for n, raw in enumerate(iter(lambda: fh.readline(MAX_JOURNAL_LINE + 1), b""), start=1):
                read += len(raw)
                if read > limit:
                    raise StudyError(f"{where}: grew past {limit:,} bytes while read; is another study writing it?")
                if not raw.endswith(b"\n"):
                    if len(raw) > MAX_JOURNAL_LINE:
                        bad.append(f"line {n:,} is over {MAX_JOURNAL_LINE:,} bytes")
                        while raw and not raw.endswith(b"\n"):  # skip the rest of that line
                            raw = fh.readline(MAX_JOURNAL_LINE + 1)
                            read += len(raw)
                        continue
                    torn = True  # the last line, cut short by a stop while it was written
                    break
                row = _json_line(raw)
                if n == 1:
                    if isinstance(row, dict) and "fingerprint" in row and "index" not in row:
                        self._check_meta(row, self.journal_path)
                        continue
                    damaged_head = True  # the rows below are each checked against this study
                    if not isinstance(row, dict) or CHECK_KEY not in row:
                        continue
                why = row_problem(row, self.meta) if isinstance(row, dict) else "not a result"
                if why is None and row.get(CHECK_KEY) != row_check(fp, row):
                    why = "changed since this study wrote it, or of another study"
                if why is not None:
                    bad.append(f"line {n:,}: {why}")
                else:
                    self.done.setdefault(int(row["index"]), {k: v for k, v in row.items() if k != CHECK_KEY})
        if damaged_head:
            self.notes.append(f"{clean(self.journal_path.name, 80)}: its first line was damaged; each row was checked")
        if torn:
            self.notes.append(
                f"{clean(self.journal_path.name, 80)}: its last line was cut short (a stop while it was written); "
                "that scenario runs again"
            )
        self._reject(self.journal_path, len(bad), bad[0] if bad else "", "lines")
        return damaged_head or torn or bool(bad)

    def _repair(self) -> None:
        """Write every good row to the output (atomically), then remove the journal they are now in: results and
        journal are never both at risk, and the next journal starts on a clean first line."""
        if self.done:
            self.write()
        try:
            self.journal_path.unlink()
        except FileNotFoundError:
            pass
        except OSError as exc:
            raise StudyError(
                f"{clean(str(self.journal_path), 120)}: cannot remove ({clean(exc.strerror or str(exc), 80)})"
            ) from None

    # -- adding ---------------------------------------------------------------------------------------
    def _open_journal(self) -> None:
        fresh = not self.journal_path.exists() or self.journal_path.stat().st_size == 0
        self._journal = open(self.journal_path, "a", encoding="utf-8")  # noqa: SIM115 - closed in close()
        if not fresh:
            # a line cut short by a kill ends without a newline: start on a line of our own
            with open(self.journal_path, "rb") as fh:
                fh.seek(-1, os.SEEK_END)
                if fh.read(1) != b"\n":
                    self._journal.write("\n")
        else:
            head = {"fingerprint": self.meta["fingerprint"], "version": __version__}
            self._journal.write(json.dumps(head) + "\n")
        self._journal.flush()

    def add(self, row: dict[str, Any]) -> bool:
        """Keep a row; a second row for the same scenario is dropped (False). Rows of one scenario are
        the same numbers by construction; if they ever differ, the first is kept and the index noted."""
        why = row_problem(row, self.meta)
        if why is not None:
            raise StudyError(f"scenario {_shown(row.get('index'))} came back malformed: {why}")
        index = int(row["index"])
        old = self.done.get(index)
        if old is not None:
            self.duplicates += 1
            if any(not _same(old.get(k), v) for k, v in row.items()):
                self.mismatches.append(index)
            return False
        try:
            if self._journal is None:
                self._open_journal()
            line = json.dumps({**row, CHECK_KEY: row_check(self.meta["fingerprint"], row)}, allow_nan=True)
            self._journal.write(line + "\n")
            self._journal.flush()
            now = time.monotonic()
            if now - self._last_sync >= SYNC_EVERY_S:
                os.fsync(self._journal.fileno())
                self._last_sync = now
        except OSError as exc:
            self.broken = True
            raise StudyError(
                f"{clean(str(self.journal_path), 120)}: cannot write ({clean(exc.strerror or str(exc), 120)}); the "
                f"results so far are kept: free space or fix the folder and run the same command to go on"
            ) from None
        self.done[index] = row
        self._dirty = True
        if now - self._last_write >= REWRITE_EVERY_S:
            self.write()
        return True

    def write(self) -> None:
        """Rewrite the output from every row so far (atomically), sorted by index."""
        rows = [self.done[i] for i in sorted(self.done)]
        try:
            _write(self.path, self.meta, rows)
        except StudyError:
            self.broken = True
            raise
        self._last_write = time.monotonic()
        self._dirty = False

    def close(self) -> None:
        """Write the output (when anything arrived) and remove the journal it now holds. When a write failed
        (StudyError), the journal is kept, so that a re-run resumes from it."""
        if self._journal is not None:
            try:
                self._journal.close()
            except OSError:
                self.broken = True
            self._journal = None
        if self.broken:
            return
        if self._dirty or (self.done and not self.path.exists()):
            try:
                self.write()
            except StudyError:
                self.broken = True
                raise
        try:
            self.journal_path.unlink()
        except FileNotFoundError:
            pass


def _json_line(raw: bytes) -> Any:
    """A journal line's JSON value, or None where it is not JSON (or is nested too deeply to be a row)."""
    try:
        return json.loads(raw.decode("utf-8"))
    except (ValueError, RecursionError):
        return None


def _plain(v: Any) -> Any:
    if isinstance(v, np.generic):
        v = v.item()
    if isinstance(v, float) and math.isnan(v):
        return None
    return v


# -- reading ----------------------------------------------------------------------------------------------


def read_results(path: str | os.PathLike[str]) -> StudyResults:
    """Read a results file that ``planner-gui study`` wrote (Parquet or CSV); one-line errors. The description
    is checked before anything is built from it, and every cell against its column's kind."""
    p = Path(os.fspath(path))
    fmt = output_format(p)
    if not p.is_file():
        what = os.strerror(errno.ENOENT) if not p.exists() else "not a regular file"  # as every other file says
        raise StudyError(f"{clean(str(p), 120)}: cannot read ({what})")
    limit = MAX_DESCRIPTION_BYTES + MAX_BYTES_PER_SCENARIO * MAX_SCENARIOS
    try:
        with open_regular(p, limit) as fh:
            meta, columns, skipped = _read_parquet(fh) if fmt == "parquet" else _read_csv(fh)
    except StudyError as exc:
        raise StudyError(f"{clean(p.name, 80)}: {exc}") from None
    except FileRefused as exc:
        raise StudyError(f"{clean(str(p), 120)}: cannot read ({exc})") from None
    except OSError as exc:
        raise StudyError(f"{clean(str(p), 120)}: cannot read ({clean(exc.strerror or str(exc), 80)})") from None
    except ImportError as exc:
        raise StudyError(f"{clean(p.name, 80)}: reading Parquet needs {missing_package(exc)}") from None
    except UnicodeDecodeError as exc:
        raise StudyError(f"{clean(p.name, 80)}: not study results (not UTF-8 text: byte {exc.start:,})") from None
    except csv.Error as exc:
        raise StudyError(f"{clean(p.name, 80)}: not study results (a CSV line that cannot be read: {exc})") from None
    except Exception as exc:
        raise StudyError(
            f"{clean(p.name, 80)}: not study results ({clean(f'{type(exc).__name__}: {exc}', 160)})"
        ) from None
    return _set_aside(StudyResults(meta, columns, p), skipped)


_KINDS = ("int", "float", "text")


def _bad(what: str) -> StudyError:
    return StudyError(f"not results of planner-gui study ({what})")


def _check_input(d: Any, name: str, kind: str) -> None:
    """One input of the description, as :meth:`.spec.Input.to_dict` writes it (bounded as a study file is)."""
    where = f"input '{clean(name, 60)}'"
    if not isinstance(d, dict) or d.get("name") != name:
        raise _bad(f"{where} is not described")
    path = d.get("path")
    if not isinstance(path, list) or not path or not all(isinstance(x, str) for x in path):
        raise _bad(f"{where} has no path")
    if "levels" in d:
        levels = d["levels"]
        if not isinstance(levels, list) or not 1 <= len(levels) <= MAX_SCENARIOS:
            raise _bad(f"{where}: levels must be a list of 1 to {MAX_SCENARIOS:,} values")
        if kind != "text" and not all(_is_num(v) and math.isfinite(v) for v in levels):
            raise _bad(f"{where}: a numeric input's levels must be finite numbers")
        return
    lo, hi = d.get("min"), d.get("max")
    if not (_is_num(lo) and _is_num(hi) and math.isfinite(lo) and math.isfinite(hi) and lo <= hi):
        raise _bad(f"{where}: a range needs finite numbers min <= max")
    if d.get("scale", "linear") not in ("linear", "log") or (d.get("scale") == "log" and lo <= 0):
        raise _bad(f"{where}: scale must be linear, or log with min > 0")
    points = d.get("points")
    if points is not None and (not _is_int(points) or not 1 <= points <= 10_000):
        raise _bad(f"{where}: points must be a whole number from 1 to 10,000 (got {_shown(points)})")
    if kind == "text":
        raise _bad(f"{where}: a range is a numeric input")


def _check_read_meta(meta: Any) -> dict[str, Any]:
    """The description of a results file, checked (kinds, names, bounds) before anything is built from it."""
    if not isinstance(meta, dict) or meta.get("format") != RESULTS_FORMAT or "columns" not in meta:
        raise StudyError("not results of planner-gui study (no study description)")
    total, columns = meta.get("total"), meta.get("columns")
    if not _is_int(total) or not 1 <= total <= MAX_SCENARIOS:
        raise _bad(f"total must be a whole number from 1 to {MAX_SCENARIOS:,} (got {_shown(total)})")
    if (
        not isinstance(columns, dict)
        or not all(isinstance(c, str) and k in _KINDS for c, k in columns.items())
        or len(columns) > MAX_INPUTS + len(OUTPUTS) + 3
    ):
        raise _bad("columns must name each column and its kind (int, float or text)")
    if columns.get("index") != "int" or columns.get("seed") != "int":
        raise _bad("no whole-number index and seed columns")
    study, inputs, outputs = meta.get("study"), meta.get("inputs"), meta.get("outputs")
    if not isinstance(inputs, list) or not isinstance(outputs, list) or not isinstance(study, dict):
        raise _bad("no list of inputs and outputs, or no study")
    for c in (*inputs, *outputs):  # (an input may be the seed: a study that varies it)
        if not isinstance(c, str) or c not in columns or c == "index" or (c == "seed" and c in outputs):
            raise _bad(f"'{clean(str(c), 60)}' is not a column")
    if len(set(inputs) | set(outputs)) != len(inputs) + len(outputs) or len(inputs) > MAX_INPUTS:
        raise _bad("an input or output is named twice, or there are too many inputs")
    if set(columns) != {"index", "seed", *inputs, *outputs}:
        raise _bad("a column is neither an input nor an output")
    bad_output = next((c for c in outputs if columns[c] != "float"), None)
    if bad_output is not None:
        raise _bad(f"output '{clean(bad_output, 60)}' is not a number column")
    if not isinstance(study.get("name"), str) or study.get("design") not in DESIGNS:
        raise _bad(f"the study has no name, or a design other than {', '.join(DESIGNS)}")
    trials = study.get("trials")
    if not _is_int(trials) or not 1 <= trials <= 100_000:
        raise _bad(f"trials must be a whole number from 1 to 100,000 (got {_shown(trials)})")
    described = study.get("inputs")
    if not isinstance(described, list) or len(described) != len(inputs):
        raise _bad("the study does not describe each input")
    samples = study.get("samples")
    if study["design"] != "grid":
        size = samples * (len(inputs) + 2) if study["design"] == "sobol" and _is_int(samples) else samples
        if not _is_int(samples) or samples < 1 or size != total:
            raise _bad(
                f"{total:,} scenarios are not what the {study['design']} design of {_shown(samples)} samples over "
                f"{len(inputs)} inputs makes"
            )
    for d, name in zip(described, inputs):
        _check_input(d, name, columns[name])
    if not isinstance(meta.get("fingerprint"), str):
        raise _bad("no fingerprint")
    return meta


def _bad_rows(meta: dict[str, Any], columns: dict[str, Any]) -> tuple[np.ndarray, str]:
    """Which rows of ``columns`` are not results (as :func:`row_problem` judges a row, column by column), and
    why the first of them is not ("row 3: goodput.mean is 1.5, not a share from 0 to 1")."""
    bad = np.zeros(len(columns["index"]), dtype=bool)
    first: list[tuple[int, str]] = []
    outputs = set(meta["outputs"])
    total = int(meta["total"])
    for c, kind in meta["columns"].items():
        v = columns[c]
        checks: list[tuple[np.ndarray, str]] = []
        if c == "index":
            outside = (v < 0) | (v >= total)
            checks.append((outside, f"not a scenario of this study (0 to {total - 1:,})"))
            again = _repeated(np.where(outside, -1, v))
            checks.append((again, "not the first row of its scenario (the first is kept)"))
        elif c in outputs:
            if c in REQUIRED_OUTPUTS:
                checks.append((np.isnan(v), "is empty (every scenario run has one)"))
            with np.errstate(invalid="ignore"):
                wrong = np.isinf(v) | (v < -_ROUNDING)
                if c in SHARE_OUTPUTS:
                    wrong |= v > 1 + _ROUNDING
            share = c in SHARE_OUTPUTS
            checks.append((wrong, "not a share from 0 to 1" if share else "not a finite number, 0 or more"))
        elif c == "seed":
            checks.append((v < 0, "not a seed (a whole number from 0 to 2**63 - 1)"))
        elif kind != "text" and c != "index":
            checks.append((~np.isfinite(v), "not a finite number"))
        for mask, what in checks:
            if mask.any():
                k = int(np.argmax(mask))
                said = what if what.startswith("is ") else f"is {_shown(v[k].item())}, {what}"
                first.append((k, f"{c} {said}"))
                bad |= mask
    index = columns["index"]
    ok = ~bad & (index >= 0) & (index < total)
    for mask, say in _off_design(meta, columns, np.where(ok, index, 0)):
        mask &= ok
        if mask.any():
            k = int(np.argmax(mask))
            first.append((k, say(k)))
            bad |= mask
    if not first:
        return bad, ""
    k, why = min(first)
    return bad, f"row {k + 1:,}: {why}"


#: How near a row's value of a numeric input must be to its design's (relative): the design's values are made for
#: every row at once, and numpy's vectorized powers may differ from Python's in the last bit.
_SAME_VALUE = 1e-12


def _off_design(
    meta: dict[str, Any], columns: dict[str, Any], index: np.ndarray
) -> list[tuple[np.ndarray, Callable[[int], str]]]:
    """Per input of the study: which rows hold another value than the one its design gives their ``index``, and
    why row ``k`` does (all rows at once; a row's seed is checked when its study resumes,
    :func:`.runners.check_done`). None for a Sobol design where SALib is missing (its points cannot be made)."""
    from .design import unit_points

    study = meta["study"]
    inputs = tuple(_input_of(d) for d in study["inputs"])
    if not inputs:
        return []
    if study["design"] == "grid":
        where: list[np.ndarray] = []
        rest = index.copy()
        for inp in reversed(inputs):
            k = len(inp.grid_values())
            where.append(rest % k)
            rest //= k
        where.reverse()
        expected = [(inp.grid_values(), w) for inp, w in zip(inputs, where)]
    else:
        spec = StudySpec("", {}, inputs, design=study["design"], samples=int(study["samples"]), seed=int(study["seed"]))
        try:
            u = unit_points(spec)[index]
        except StudyError:
            return []
        expected = [_values_at(inp, u[:, k]) for k, inp in enumerate(inputs)]
    out = []
    for inp, (values, at) in zip(inputs, expected):
        column = columns[inp.name]
        cells = [input_cell(inp, v) for v in values]
        if isinstance(column, Texts):
            code = {v: c for c, v in enumerate(column.levels)}
            wrong = column.codes != np.array([code.get(c, -1) for c in cells], dtype=np.int64)[at]
        else:
            want = np.asarray(cells, dtype=float)[at]  # (computed for all rows at once: to 12 digits, not to the bit)
            wrong = ~np.isclose(np.asarray(column, dtype=float), want, rtol=_SAME_VALUE, atol=0.0)
        out.append((wrong, _off_design_why(inp, column, cells, at, index)))
    return out


def _off_design_why(inp: Input, column: Any, cells: list[Any], at: np.ndarray, index: np.ndarray) -> Any:
    def why(k: int) -> str:
        v = column[k]
        return (
            f"{inp.name} is {_shown(v.item() if isinstance(v, np.generic) else v)}, not the "
            f"{_shown(cells[int(at[k])])} this design gives scenario {int(index[k]):,}"
        )

    return why


def _values_at(inp: Input, u: np.ndarray) -> tuple[tuple[Any, ...], np.ndarray]:
    """:meth:`.spec.Input.value_at` of every ``u`` at once: the values taken and where each ``u`` takes its."""
    if inp.levels is not None:
        k = len(inp.levels)
        return inp.levels, np.clip(np.floor(u * k), 0, k - 1).astype(np.int64)
    lo, hi = inp.lo, inp.hi
    if inp.log:
        v = 10.0 ** (math.log10(lo) + u * (math.log10(hi) - math.log10(lo)))
    else:
        v = lo + u * (hi - lo)
    v = np.minimum(hi, np.maximum(lo, np.where(u <= 0.0, lo, np.where(u >= 1.0, hi, v))))
    if inp.integer:
        v = np.round(v)
    values, at = np.unique(v, return_inverse=True)
    found = [int(x) for x in values.tolist()] if inp.integer else values.tolist()
    return tuple(found), at.reshape(-1)


def _input_of(d: dict[str, Any]) -> Input:
    """An input of a study from its description (:meth:`.spec.Input.to_dict`)."""
    path = tuple(d["path"])
    if "levels" in d:
        return Input(path, levels=tuple(d["levels"]))
    points = d.get("points")
    return Input(
        path,
        lo=float(d["min"]),
        hi=float(d["max"]),
        log=d.get("scale") == "log",
        points=None if points is None else int(points),
        integer=bool(d.get("integer")),
    )


def _repeated(index: np.ndarray) -> np.ndarray:
    """Which rows repeat the index of a row before them (negative: none)."""
    valid = index >= 0
    if not valid.any() or np.bincount(index[valid]).max() <= 1:  # (the usual case, in one pass)
        return np.zeros(index.size, dtype=bool)
    order = np.argsort(index, kind="stable")
    ordered = index[order]
    again = np.zeros(index.size, dtype=bool)
    again[order[1:]] = (ordered[1:] == ordered[:-1]) & (ordered[1:] >= 0)
    return again


def _set_aside(res: StudyResults, skipped: tuple[int, str] = (0, "")) -> StudyResults:
    """``res`` without the rows that are not results; how many there were (with the lines read that were not
    rows, ``skipped``) and why the first is not in ``res.set_aside``."""
    bad, why = _bad_rows(res.meta, res.columns)
    count = int(bad.sum()) + skipped[0]
    if not count:
        return res
    keep = ~bad
    columns = {c: v[keep] for c, v in res.columns.items()}
    return StudyResults(res.meta, columns, res.path, set_aside=(count, skipped[1] or why))


def _check_index(columns: dict[str, Any]) -> None:
    if columns["index"].dtype.kind != "i":
        raise StudyError("the index column is not whole numbers")


def _read_parquet(fh: Any) -> tuple[dict[str, Any], dict[str, Any], tuple[int, str]]:
    import pyarrow as pa
    import pyarrow.parquet as pq

    pf = pq.ParquetFile(fh)
    raw = (pf.schema_arrow.metadata or {}).get(META_KEY)
    if raw is None:
        raise StudyError("not results of planner-gui study (no study description in the Parquet metadata)")
    if len(raw) > MAX_DESCRIPTION_BYTES:
        raise _bad(f"the description is over {MAX_DESCRIPTION_BYTES:,} bytes")
    meta = _check_read_meta(_json_line(raw))
    types = {"int": pa.types.is_integer, "float": lambda t: pa.types.is_floating(t) or pa.types.is_integer(t)}
    schema = pf.schema_arrow
    for c, kind in meta["columns"].items():
        if schema.get_field_index(c) < 0:
            raise StudyError(f"no column '{clean(c, 60)}'")
        t = schema.field(c).type
        ok = pa.types.is_string(t) or pa.types.is_large_string(t) if kind == "text" else types[kind](t)
        if not ok and not pa.types.is_null(t):
            raise StudyError(f"column '{clean(c, 60)}' holds {t}, not {_KIND_WORDS[kind]}")
    table = pf.read(columns=list(meta["columns"]), use_threads=False)  # (one core: the window has the other)
    columns: dict[str, Any] = {}
    for c, kind in meta["columns"].items():
        column = table.column(c)
        if kind == "text":
            columns[c] = _texts(column)
        elif column.null_count == 0 and kind == "int":
            columns[c] = _numbers(column, np.int64)
        elif c in ("index", "seed"):
            raise StudyError(f"column '{c}' has an empty cell")
        else:
            columns[c] = _numbers(column, np.float64)  # an empty cell is NaN
    _check_index(columns)
    return meta, columns, (0, "")


#: Cells converted in one call: a reading thread holds the interpreter lock for one call at a time, so the
#: window's thread waits for at most this many (about a millisecond) however large the file.
_SLICE = 1 << 15


def _slices(column: Any) -> Any:
    for chunk in column.chunks:
        for start in range(0, len(chunk), _SLICE):
            yield chunk.slice(start, _SLICE)


def _numbers(column: Any, dtype: type) -> np.ndarray:
    """A Parquet column as one numpy array (empty cells NaN)."""
    out: np.ndarray = np.empty(len(column), dtype=dtype)
    at = 0
    for part in _slices(column):
        values = part.to_numpy(zero_copy_only=False)
        out[at : at + len(values)] = values
        at += len(values)
    return out


def _texts(column: Any) -> Texts:
    import pyarrow.compute as pc

    levels = pc.unique(column)
    codes = pc.index_in(column, value_set=levels)  # (an empty cell is a level, None, as the list had)
    return Texts(np.asarray(codes.to_numpy(zero_copy_only=False), dtype=np.int32), levels.to_pylist())


_KIND_WORDS = {"int": "whole numbers", "float": "numbers", "text": "text"}


def _read_csv(fh: Any) -> tuple[dict[str, Any], dict[str, Any], tuple[int, str]]:
    first = fh.readline(MAX_DESCRIPTION_BYTES + 1)
    if len(first) > MAX_DESCRIPTION_BYTES:
        raise _bad(f"the first line is over {MAX_DESCRIPTION_BYTES:,} bytes")
    first = first.decode("utf-8-sig").rstrip("\r\n")
    if not first.startswith(CSV_MARK):
        raise StudyError(f"not results of planner-gui study (the first line does not start '{CSV_MARK.strip()}')")
    meta = _check_read_meta(_json_line(first[len(CSV_MARK) :].encode()))
    text = io.TextIOWrapper(fh, encoding="utf-8", newline="")
    try:
        columns, skipped, first = _csv_columns(csv.reader(text), meta)
    except UnicodeDecodeError:
        raise StudyError("not study results (not UTF-8 text)") from None
    finally:
        text.detach()  # (the file is the caller's to close)
    _check_index(columns)
    return meta, columns, (skipped, first)


def _csv_columns(reader: Any, meta: dict[str, Any]) -> tuple[dict[str, Any], int, str]:
    """The cells of each column, converted as they are read (a number kept in 8 bytes, not as its text); a
    whole-number column with an empty cell becomes numbers, NaN there (as from Parquet). A line that is not a
    row (cells missing or too many, a cell not of its column's kind, no index or seed) is left out: how many
    were, and why the first was, come with the columns."""
    header: list[str] = next(reader, [])
    kinds: dict[str, str] = meta["columns"]
    if header != list(kinds):
        raise StudyError("the header does not match the study's columns")
    kind = [kinds[c] for c in header]
    cells: list[Any] = [[] if k == "text" else array.array("q" if k == "int" else "d") for k in kind]
    empty: list[list[int]] = [[] for _ in header]  # the rows of each column's empty cells
    keys = {header.index("index"), header.index("seed")}
    rows, skipped, first = 0, 0, ""
    for n, line in enumerate(reader, start=3):
        if n - 2 > meta["total"]:
            raise StudyError(f"more rows than the study's {meta['total']:,} scenarios")
        why = _csv_problem(line, header, kind, keys)
        if why is not None:
            skipped += 1
            first = first or f"line {n:,}: {why}"
            continue
        for k, v in enumerate(line):
            if kind[k] == "text":
                cells[k].append(v)
            elif not v:
                empty[k].append(rows)
                cells[k].append(0)
            else:
                cells[k].append(int(v) if kind[k] == "int" else float(v))
        rows += 1
    columns: dict[str, Any] = {}
    for k, c in enumerate(header):
        if kind[k] == "text":
            columns[c] = Texts.of(cells[k])
            continue
        values = np.array(cells[k], dtype=np.int64 if kind[k] == "int" else float)
        if empty[k]:
            values = values.astype(float)
            values[empty[k]] = np.nan
        columns[c] = values
    return columns, skipped, first


def _csv_problem(line: list[str], header: list[str], kind: list[str], keys: set[int]) -> str | None:
    """Why a CSV line is not a row of cells of their columns' kinds (None: it is)."""
    if len(line) != len(header):
        return f"{len(line)} cells, not {len(header)}"
    for k, v in enumerate(line):
        if kind[k] == "text":
            continue
        if not v:
            if k in keys:
                return f"no {header[k]}"
            continue
        try:
            x = int(v) if kind[k] == "int" else float(v)
        except ValueError:
            want = "a whole number" if kind[k] == "int" else "a number"
            return f"{clean(header[k], 60)} is '{clean(v, 30)}', not {want}"
        if kind[k] == "int" and not -(2**63) <= x < 2**63:
            return f"{clean(header[k], 60)} is '{clean(v, 30)}', too large"
    return None
