"""Study results on disk: one row per scenario, as Parquet or CSV, written as they arrive and resumable.

Rows are first appended to a journal beside the output (``results.parquet.journal``, one JSON line per
row, flushed as each arrives), and the output file is rewritten from every row received, atomically, every
few seconds and at the end (so it always opens, and always holds whole rows). The journal is removed once
the output holds every row it had. A killed run leaves the journal; the next run of the same study reads
the output and the journal and skips the scenarios they hold (a half-written last line is dropped).

Rows are keyed by their scenario's index: a row that arrives twice (a task a cluster ran again after
losing its worker) is kept once.

The output's metadata (Parquet key ``planner_gui.study``; in CSV, a first line ``# planner-gui study
{...}``) records the study: its file, design, inputs and a fingerprint that a resumed run must match.
"""

from __future__ import annotations

import csv
import errno
import hashlib
import io
import json
import math
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ... import __version__
from ..fmt import clean
from ..userfiles import write_atomic
from .spec import Input, StudyError, StudySpec
from .worker import OUTPUTS, TOTAL_COST

__all__ = [
    "CSV_MARK",
    "META_KEY",
    "ResultStore",
    "StudyResults",
    "column_kinds",
    "fingerprint",
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


def column_kinds(spec: StudySpec) -> dict[str, str]:
    """Every column of the results and its kind (int, float or text), in order."""
    kinds = {"index": "int", "seed": "int"}
    kinds |= {i.name: _input_kind(i) for i in spec.inputs}
    kinds |= {c: "float" for c, _ in OUTPUTS}
    kinds[TOTAL_COST] = "float"
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
        "outputs": [*(c for c, _ in OUTPUTS), TOTAL_COST],
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


@dataclass
class StudyResults:
    """Study results read back: the description and one array (or list of text) per column."""

    meta: dict[str, Any]
    columns: dict[str, Any]
    path: Path

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
        if self.meta["columns"].get(column) == "text":
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
                    f"{clean(self.path.name, 80)}: writing Parquet needs the Python package {exc.name}, which this "
                    "installation lacks; write CSV (-o results.csv) or pip install planner-gui"
                ) from None
        self.journal_path = self.path.with_name(self.path.name + ".journal")
        self.meta = meta
        self.done: dict[int, dict[str, Any]] = {}
        self.duplicates = 0
        self.mismatches: list[int] = []
        self.broken = False  # a write failed: close() keeps the journal and the output as they are
        self.failed: dict[int, str] = {}  # scenarios that could not run this time (not recorded; a re-run tries them)
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
            for i in range(res.rows):
                row = {c: _plain(res.columns[c][i]) for c in cols}
                self.done[int(row["index"])] = row
        if self.journal_path.exists():
            self._read_journal()

    def _read_journal(self) -> None:
        try:
            text = self.journal_path.read_text("utf-8", errors="replace")
        except OSError as exc:
            raise StudyError(f"{clean(str(self.journal_path), 120)}: cannot read ({exc.strerror})") from None
        lines = text.split("\n")
        complete, last = lines[:-1], lines[-1]  # the last piece has no newline: a line cut short
        if not complete:
            return
        try:
            head = json.loads(complete[0])
        except ValueError:
            head = {}
        self._check_meta(head, self.journal_path)
        for n, line in enumerate(complete[1:], start=2):
            try:
                row = json.loads(line)
                index = int(row["index"])
            except (ValueError, KeyError, TypeError):
                raise StudyError(
                    f"{clean(str(self.journal_path), 120)}: line {n} is not a result; remove the file to run "
                    "those scenarios again"
                ) from None
            self.done.setdefault(index, row)
        del last

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
            self._journal.write(json.dumps({"fingerprint": self.meta["fingerprint"]}) + "\n")
        self._journal.flush()

    def add(self, row: dict[str, Any]) -> bool:
        """Keep a row; a second row for the same scenario is dropped (False). Rows of one scenario are
        the same numbers by construction; if they ever differ, the first is kept and the index noted."""
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
            self._journal.write(json.dumps(row, allow_nan=True) + "\n")
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


def _plain(v: Any) -> Any:
    if isinstance(v, np.generic):
        v = v.item()
    if isinstance(v, float) and math.isnan(v):
        return None
    return v


# -- reading ----------------------------------------------------------------------------------------------


def read_results(path: str | os.PathLike[str]) -> StudyResults:
    """Read a results file that ``planner-gui study`` wrote (Parquet or CSV); one-line errors."""
    p = Path(os.fspath(path))
    fmt = output_format(p)
    if not p.is_file():
        what = os.strerror(errno.ENOENT) if not p.exists() else "not a regular file"  # as every other file says
        raise StudyError(f"{clean(str(p), 120)}: cannot read ({what})")
    try:
        meta, columns = _read_parquet(p) if fmt == "parquet" else _read_csv(p)
    except StudyError as exc:
        raise StudyError(f"{clean(p.name, 80)}: {exc}") from None
    except ImportError as exc:
        raise StudyError(f"{clean(p.name, 80)}: reading Parquet needs the Python package {exc.name}") from None
    except Exception as exc:
        raise StudyError(
            f"{clean(p.name, 80)}: not study results ({clean(f'{type(exc).__name__}: {exc}', 160)})"
        ) from None
    return StudyResults(meta, columns, p)


def _check_read_meta(meta: Any) -> dict[str, Any]:
    if not isinstance(meta, dict) or meta.get("format") != RESULTS_FORMAT or "columns" not in meta:
        raise StudyError("not results of planner-gui study (no study description)")
    return meta


def _read_parquet(p: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    import pyarrow.parquet as pq

    table = pq.read_table(p)
    raw = (table.schema.metadata or {}).get(META_KEY)
    if raw is None:
        raise StudyError("not results of planner-gui study (no study description in the Parquet metadata)")
    meta = _check_read_meta(json.loads(raw))
    columns: dict[str, Any] = {}
    for c, kind in meta["columns"].items():
        values = table.column(c).to_pylist()
        columns[c] = values if kind == "text" else np.array([np.nan if v is None else v for v in values], dtype=float)
        if kind == "int" and None not in values:
            columns[c] = np.asarray(values, dtype=np.int64)
    return meta, columns


def _read_csv(p: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    text = p.read_text("utf-8-sig")
    first, _, rest = text.partition("\n")
    if not first.startswith(CSV_MARK):
        raise StudyError(f"not results of planner-gui study (the first line does not start '{CSV_MARK.strip()}')")
    meta = _check_read_meta(json.loads(first[len(CSV_MARK) :]))
    reader = csv.reader(io.StringIO(rest))
    header = next(reader, [])
    kinds: dict[str, str] = meta["columns"]
    if header != list(kinds):
        raise StudyError("the header does not match the study's columns")
    cells: dict[str, list[str]] = {c: [] for c in header}
    for n, line in enumerate(reader, start=3):
        if len(line) != len(header):
            raise StudyError(f"line {n} has {len(line)} cells, not {len(header)}")
        for c, v in zip(header, line):
            cells[c].append(v)
    columns: dict[str, Any] = {}
    for c, kind in kinds.items():
        if kind == "text":
            columns[c] = cells[c]
        elif kind == "int" and all(cells[c]):
            columns[c] = np.asarray([int(v) for v in cells[c]], dtype=np.int64)
        else:
            columns[c] = np.asarray([float(v) if v else np.nan for v in cells[c]], dtype=float)
    return meta, columns
