"""Reading an incident log: timestamps, columns, components; every problem is one line."""

from __future__ import annotations

import csv
import functools
import io
import math
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

from ..files.scenario_io import MAX_COMPONENTS
from ..model.scenario import Component, llama3_components
from ..util import fmt
from ..util.fmt import clean
from ..util.userfiles import FileRefused, bad_path, read_limited

#: Confidence of every interval. A trend is reported when its two-sided p-value is below 1 - LEVEL, the
#: test that matches the intervals (MIL-HDBK-189's p-value is below it exactly when the power-law shape's
#: interval leaves out 1).
LEVEL = 0.90
#: Logs are read only up to this size (about 150,000 incidents): a log is data, not a stream.
MAX_LOG_BYTES = 10_000_000
#: Longest component name and category (as in scenario files).
TEXT_MAX_LEN = 100
#: Fewest incidents a trend test or a shape fit uses: with fewer, they say too little to report.
MIN_POINTS = 5

_UTC = timezone.utc
_HOURS_PER_SECOND = 1.0 / 3600.0


class IncidentLogError(ValueError):
    """An incident log or a window cannot be used; ``str(err)`` is one line for the user."""


# -- timestamps ------------------------------------------------------------------------------------------

_ZONE = r"(?P<zone>[Zz]|\s*(?:UTC|GMT)|[+-]\d{2}(?::?\d{2})?)?"
_ISO_EXTENDED = re.compile(
    r"(?P<y>\d{4})-(?P<mo>\d{2})-(?P<d>\d{2})"
    r"(?:[Tt ](?P<h>\d{2}):(?P<mi>\d{2})(?::(?P<s>\d{2})(?:[.,](?P<f>\d+))?)?)?" + _ZONE,
    re.ASCII,
)
_ISO_BASIC = re.compile(
    r"(?P<y>\d{4})(?P<mo>\d{2})(?P<d>\d{2})"
    r"(?:[Tt](?P<h>\d{2})(?P<mi>\d{2})(?:(?P<s>\d{2})(?:[.,](?P<f>\d+))?)?)?" + _ZONE,
    re.ASCII,
)
_TIME_EXAMPLE = "such as 2025-01-31T13:45:00Z or 2025-01-31 13:45:00+01:00"


def parse_time(text: str) -> tuple[datetime, bool]:
    """An ISO 8601 date and time as an aware datetime, and whether the text named its time zone.

    Accepts the extended (``2025-01-31T13:45:07.5+01:00``) and basic (``20250131T134507Z``) forms, a
    space for the ``T``, a comma for the decimal point, and ``UTC``/``GMT`` for ``Z``. A time without a
    zone is read as UTC. Raises :class:`ValueError` with a short reason.
    """
    value = text.strip()
    m = _ISO_EXTENDED.fullmatch(value) or _ISO_BASIC.fullmatch(value)
    if m is None:
        raise ValueError(f"is not an ISO 8601 date and time ({_TIME_EXAMPLE})")
    g = m.groupdict()
    zone = (g["zone"] or "").strip()
    try:
        tz = _UTC
        if zone not in ("", "Z", "z", "UTC", "GMT"):
            digits = zone[1:].replace(":", "")
            hours, minutes = int(digits[:2]), int(digits[2:] or 0)
            if hours > 23 or minutes > 59:
                raise ValueError("an offset is at most 23:59")
            tz = timezone((-1 if zone[0] == "-" else 1) * timedelta(hours=hours, minutes=minutes))
        micro = int((g["f"] or "0")[:6].ljust(6, "0"))
        when = datetime(
            int(g["y"]), int(g["mo"]), int(g["d"]), int(g["h"] or 0), int(g["mi"] or 0), int(g["s"] or 0), micro, tz
        ).astimezone(_UTC)
    except (ValueError, OverflowError) as exc:  # month 13, 25 o'clock, an offset of a day, the year 0
        raise ValueError(f"is not a valid date and time ({exc})") from None
    return when, bool(zone)


def _iso(when: datetime, zoned: bool) -> str:
    """A time as the log wrote it: UTC with a ``Z``, or without a zone when the log had none."""
    utc = when.astimezone(_UTC).replace(tzinfo=None)
    text = utc.isoformat(timespec="seconds" if utc.microsecond == 0 else "microseconds")
    return text + "Z" if zoned else text


# -- reading a log ---------------------------------------------------------------------------------------


def _key(text: str) -> str:
    """A header as a key: lower case, letters and digits only (``"GPUs affected"`` -> ``"gpusaffected"``)."""
    return re.sub(r"[^a-z0-9]", "", text.casefold())


def _spellings(words: str) -> frozenset[str]:
    return frozenset(words.split())


#: Header spellings of each column, as keys (see :func:`_key`).
_COLUMNS: dict[str, frozenset[str]] = {
    "time": _spellings(
        "timestamp timestamputc time timeutc datetime datetimeutc date dateandtime when ts eventtime "
        "incidenttime failuretime interruptiontime occurred occurredat detected detectedat starttime startedat "
        "createdat"
    ),
    "component": _spellings(
        "component componentname cause rootcause reason failure failuretype failurecause fault faulttype "
        "incidenttype type kind part failedcomponent"
    ),
    "category": _spellings(
        "category componentcategory causecategory failurecategory rootcausecategory group class subsystem"
    ),
    "gpus": _spellings(
        "gpus gpusaffected affectedgpus numgpus ngpus gpucount gpuslost gpusdown gpusimpacted impactedgpus"
    ),
}
#: The spelling of each column that wins over the others.
_CANONICAL = {"time": "timestamp", "component": "component", "category": "category", "gpus": "gpusaffected"}
_COLUMN_NAMES = {
    "time": "timestamp (or time, date, datetime)",
    "component": "component (or cause, root cause, failure, type)",
}


@dataclass
class _Log:
    """The incidents of a log, in file order, as :func:`_parse` gathers them."""

    times: list[datetime]
    lines: list[int]
    keys: list[str]  # component identity: name with case and runs of spaces ignored
    names: dict[str, str]  # key -> name shown (Llama 3's spelling when it is one of its causes)
    categories: dict[str, str | None]  # key -> category from the file, if any
    gpus_hit: list[int | None] | None  # None: no such column
    zoned: bool
    ignored: tuple[str, ...]


def _read_bytes(path: str | os.PathLike[str]) -> bytes:
    """At most ``MAX_LOG_BYTES + 1`` bytes of a regular file; never blocks on a FIFO or a device."""
    why = bad_path(path)
    if why is not None:
        raise IncidentLogError(f"cannot read the log ({why})")
    shown = clean(os.fsdecode(os.fspath(path)), 120)
    try:
        return read_limited(path, MAX_LOG_BYTES)
    except FileRefused as exc:
        raise IncidentLogError(f"{shown}: {exc}") from None
    except OSError as exc:
        raise IncidentLogError(f"{shown}: cannot read ({clean(exc.strerror or str(exc), 120)})") from None


def _decode(data: bytes) -> str:
    if len(data) > MAX_LOG_BYTES:
        raise IncidentLogError(f"the log is {len(data):,} bytes; the limit is {MAX_LOG_BYTES:,}")
    try:
        return data.decode("utf-8-sig")  # spreadsheets on Windows write a byte-order mark
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise IncidentLogError(f"line {line}: not UTF-8 text (byte {exc.start:,}); save the log as UTF-8") from None


def _fields(line: str, number: int, delimiter: str) -> list[str]:
    # One record (:func:`_records`): its physical lines, numbered by the first.
    try:
        row = next(csv.reader(io.StringIO(line, newline=""), delimiter=delimiter, strict=True), [])
    except csv.Error as exc:
        raise IncidentLogError(f"line {number}: cannot be read as CSV ({clean(str(exc), 80)})") from None
    return [f.strip() for f in row]


def _header(fields: list[str], number: int) -> dict[str, int]:
    """Column index of each role found in the header line."""
    if fields and fields[0]:
        try:
            parse_time(fields[0])
        except ValueError:
            pass
        else:
            raise IncidentLogError(
                f"line {number}: no header line; the first line must name the columns, as in "
                "timestamp,component,category,gpus_affected"
            )
    matches: dict[str, list[int]] = {}
    for i, name in enumerate(fields):
        for role, spellings in _COLUMNS.items():
            if _key(name) in spellings:
                matches.setdefault(role, []).append(i)
    found: dict[str, int] = {}
    for role, where in matches.items():
        # A column named exactly for its role wins over others that might be it ("component" over "type").
        exact = [i for i in where if _key(fields[i]) == _CANONICAL[role]]
        if len(where) > 1 and len(exact) != 1:
            a, b = (clean(fields[i], 30) for i in where[:2])
            raise IncidentLogError(
                f"line {number}: columns '{a}' and '{b}' could both be the {role} column; keep one (a date and a "
                "time belong in one ISO 8601 column)"
            )
        found[role] = exact[0] if exact else where[0]
    for role in ("time", "component"):
        if role not in found:
            shown = ", ".join(f"'{clean(f, 30)}'" for f in fields[:8]) or "none"
            raise IncidentLogError(f"line {number}: no {_COLUMN_NAMES[role]} column (columns: {shown})")
    return found


def _text(value: str, what: str, number: int) -> str:
    if len(value) > TEXT_MAX_LEN:
        raise IncidentLogError(
            f"line {number}: {what} is {len(value):,} characters; at most {TEXT_MAX_LEN} are allowed"
        )
    return value


def _gpus_hit(value: str, gpus: int, number: int) -> int | None:
    if not value:
        return None
    try:
        hit = float(value)
    except ValueError:
        hit = math.nan
    if not (math.isfinite(hit) and hit.is_integer() and hit >= 0):
        raise IncidentLogError(
            f"line {number}: GPUs affected must be a whole number, 0 or more (got '{clean(value, 30)}')"
        )
    if hit > gpus:
        raise IncidentLogError(
            f"line {number}: {fmt.number(int(hit))} GPUs affected, more than the cluster's "
            f"{gpus:,} GPU{'s' if gpus != 1 else ''}"
        )
    return int(hit)


@functools.lru_cache(maxsize=1)
def _llama3() -> dict[str, Component]:
    return {_key_name(c.name): c for c in llama3_components()}


def _key_name(name: str) -> str:
    return " ".join(name.split()).casefold()


def _incident(
    row: list[str], cols: dict[str, int], gpus: int, number: int
) -> tuple[datetime, bool, str, str, int | None]:
    """One data line: its time, whether it named a zone, component, category ('' if none), GPUs affected."""
    stamp = row[cols["time"]]
    if not stamp:
        raise IncidentLogError(f"line {number}: no timestamp")
    try:
        when, zoned = parse_time(stamp)
    except ValueError as exc:
        raise IncidentLogError(f"line {number}: timestamp '{clean(stamp, 40)}' {exc}") from None
    name = _text(row[cols["component"]], "the component's name", number)
    if not name:
        raise IncidentLogError(f"line {number}: no component")
    category = " ".join(_text(row[cols["category"]], "the category", number).split()) if "category" in cols else ""
    hit = _gpus_hit(row[cols["gpus"]], gpus, number) if "gpus" in cols else None
    return when, zoned, name, category, hit


def _records(text: str) -> Iterator[tuple[int, str]]:
    """Each record and the number of the line it starts on: a line, or lines joined while a quoted field is
    open (a spreadsheet writes a cell with a line break in it so)."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    open_at, parts, quotes = 0, [], 0
    for number, line in enumerate(lines, 1):
        if not open_at and (not line.strip() or line.lstrip().startswith("#")):
            yield number, line
            continue
        parts.append(line)
        open_at = open_at or number
        quotes += line.count('"')  # (counted line by line: a record left open is not read again per line)
        if quotes % 2 == 0:
            yield open_at, "\n".join(parts)
            open_at, parts, quotes = 0, [], 0
    if open_at:
        raise IncidentLogError(f"line {open_at}: a quoted field is never closed (a '\"' is missing)")


def _data_lines(text: str) -> tuple[int, list[str], list[tuple[int, list[str]]], str]:
    """The header's line number and fields, then each data line's number and fields, and the delimiter.

    Blank lines and lines starting with ``#`` (comments, such as the sample's provenance) are skipped.
    """
    header: tuple[int, list[str]] | None = None
    rows: list[tuple[int, list[str]]] = []
    delimiter = ","
    for number, line in _records(text):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        if header is None:
            # The header says how fields are separated: commas, else tabs, else semicolons (spreadsheets in
            # locales whose decimal point is a comma).
            delimiter = next((d for d in (",", "\t", ";") if d in line), ",")
            header = (number, _fields(line, number, delimiter))
        else:
            rows.append((number, _fields(line, number, delimiter)))
    if header is None:
        raise IncidentLogError("the log is empty: no header line and no incidents")
    return header[0], header[1], rows, delimiter


def _parse(text: str, gpus: int) -> _Log:
    first, header, rows, _ = _data_lines(text)
    cols = _header(header, first)
    if not rows:
        raise IncidentLogError("the log has a header but no incidents")
    ncols = len(header)
    log = _Log([], [], [], {}, {}, [] if "gpus" in cols else None, False, ())
    category_line: dict[str, int] = {}
    zone_line = 0
    for number, row in rows:
        if len(row) != ncols and not (len(row) > ncols and not any(row[ncols:])):  # trailing empty fields: fine
            raise IncidentLogError(f"line {number}: {len(row)} fields, but the header has {ncols}")
        when, zoned, name, category, hit = _incident(row, cols, gpus, number)
        if not zone_line:
            zone_line, log.zoned = number, zoned
        elif zoned != log.zoned:
            # A log that mixes the two most likely mixes local time with UTC: hours off, unnoticed.
            has, hasnt = (number, zone_line) if zoned else (zone_line, number)
            raise IncidentLogError(
                f"line {number}: the timestamp on line {has} has a time zone but the one on line {hasnt} has none; "
                "give every timestamp a zone (such as Z) or none"
            )
        key = _key_name(name)
        if key not in log.names:
            if len(log.names) == MAX_COMPONENTS:
                raise IncidentLogError(f"line {number}: more than {MAX_COMPONENTS} different components")
            llama = _llama3().get(key)
            log.names[key] = llama.name if llama is not None else " ".join(name.split())
            log.categories[key] = None
        if category:
            seen = log.categories[key]
            if seen is not None and seen != category:
                raise IncidentLogError(
                    f"line {number}: '{clean(name, 40)}' is in category '{clean(category, 30)}' here but "
                    f"'{clean(seen, 30)}' on line {category_line[key]}"
                )
            log.categories[key], category_line[key] = category, number
        log.times.append(when)
        log.lines.append(number)
        log.keys.append(key)
        if log.gpus_hit is not None:
            log.gpus_hit.append(hit)
    log.ignored = tuple(clean(h, 30) for i, h in enumerate(header) if i not in cols.values() and h)
    return log
