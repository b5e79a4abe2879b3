"""Failure rates from an incident log, with their uncertainty, a test for a trend and a Weibull shape.

An incident log is a CSV file with one unplanned interruption per line: when it happened (ISO 8601, with
or without a time zone), which component caused it, and optionally its category and the GPUs it took out.
:func:`fit_log` reads one and fits, for a cluster of ``gpus`` GPUs watched over a window of ``hours``:

- each component's rate per GPU-hour, ``count / (gpus x hours)``, with a 90 % interval from the Gamma
  posterior under the Jeffreys prior (shape ``count + 1/2``, rate ``gpus x hours``);
- a test for a trend in the rate over the window (Laplace's), beside MIL-HDBK-189's test of a power-law
  process, whose shape (``< 1``: a falling rate, burn-in) has an exact 90 % interval;
- a Weibull distribution of the times between incidents, by maximum likelihood, with a 90 % profile
  likelihood interval for its shape (``< 1``: incidents come in bursts).

The two shapes answer different questions. A power-law process with shape 0.7 has a falling rate, but
the times between its incidents fit a Weibull shape near 0.95, not 0.7: the gaps of a trend are a
mixture of exponentials, only a little more spread out than one exponential. And a Weibull renewal
process of shape 0.7 has bursts but no lasting trend. So each is tested against the process it
estimates (``tests/test_incidents.py``).

Only :mod:`scipy.special` is used: the standalone bundle ships no other scipy subpackage.
"""

from __future__ import annotations

import csv
import functools
import math
import os
import re
import stat
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy.special import erfc, gammainc, gammaincc, gammaincinv

from .fmt import clean
from .model import LLAMA3_DAYS, LLAMA3_GPUS, Component, Scenario, llama3_components
from .scenario_io import MAX_COMPONENTS, NAME_MAX_LEN, validate
from .userfiles import bad_path, kind_of

__all__ = [
    "LEVEL",
    "MAX_LOG_BYTES",
    "ComponentFit",
    "FitResult",
    "IncidentLogError",
    "PowerLawFit",
    "TrendTest",
    "WeibullFit",
    "fit_log",
    "fit_weibull",
    "generate_log",
    "laplace_test",
    "mil_hdbk_189_test",
    "parse_time",
    "rate_interval",
    "sample_components",
    "sample_log_text",
]

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
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        raise IncidentLogError(f"{shown}: cannot read ({clean(exc.strerror or str(exc), 120)})") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise IncidentLogError(f"{shown}: is {kind_of(st.st_mode)}, not an incident log file")
        if st.st_size > MAX_LOG_BYTES:
            raise IncidentLogError(f"{shown}: file is {st.st_size:,} bytes; the limit is {MAX_LOG_BYTES:,}")
        chunks, total = [], 0
        while total <= MAX_LOG_BYTES:
            chunk = os.read(fd, MAX_LOG_BYTES + 1 - total)
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
    except OSError as exc:
        raise IncidentLogError(f"{shown}: cannot read ({clean(exc.strerror or str(exc), 120)})") from None
    finally:
        os.close(fd)
    if total > MAX_LOG_BYTES:  # it grew while we read it
        raise IncidentLogError(f"{shown}: file is more than {MAX_LOG_BYTES:,} bytes; the limit is {MAX_LOG_BYTES:,}")
    return b"".join(chunks)


def _decode(data: bytes) -> str:
    if len(data) > MAX_LOG_BYTES:
        raise IncidentLogError(f"the log is {len(data):,} bytes; the limit is {MAX_LOG_BYTES:,}")
    try:
        return data.decode("utf-8-sig")  # spreadsheets on Windows write a byte-order mark
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise IncidentLogError(f"line {line}: not UTF-8 text (byte {exc.start:,}); save the log as UTF-8") from None


def _fields(line: str, number: int, delimiter: str) -> list[str]:
    # One physical line is one record: incident logs have no multi-line fields, and the line numbers in
    # messages stay exact.
    try:
        row = next(csv.reader([line], delimiter=delimiter, strict=True), [])
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
        raise IncidentLogError(f"line {number}: GPUs affected must be a whole number (got '{clean(value, 30)}')")
    if hit > gpus:
        raise IncidentLogError(f"line {number}: {int(hit):,} GPUs affected, more than the {gpus:,} GPUs of the cluster")
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
    category = _text(row[cols["category"]], "the category", number) if "category" in cols else ""
    hit = _gpus_hit(row[cols["gpus"]], gpus, number) if "gpus" in cols else None
    return when, zoned, name, category, hit


def _data_lines(text: str) -> tuple[int, list[str], list[tuple[int, list[str]]], str]:
    """The header's line number and fields, then each data line's number and fields, and the delimiter.

    Blank lines and lines starting with ``#`` (comments, such as the sample's provenance) are skipped.
    """
    header: tuple[int, list[str]] | None = None
    rows: list[tuple[int, list[str]]] = []
    delimiter = ","
    for number, line in enumerate(text.replace("\r\n", "\n").replace("\r", "\n").split("\n"), 1):
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


# -- statistics ------------------------------------------------------------------------------------------


def rate_interval(count: int, exposure: float, level: float = LEVEL) -> tuple[float, float]:
    """Equal-tailed interval of a Poisson rate: the Gamma posterior under the Jeffreys prior.

    The posterior of the rate after ``count`` events in ``exposure`` (GPU-hours) is Gamma with shape
    ``count + 1/2`` and rate ``exposure``; its ``(1 - level) / 2`` and ``(1 + level) / 2`` quantiles are
    returned. It holds the true rate about ``level`` of the time on average over rates, with dips at small
    ones (0.81 for 90 % at a mean count of 2; Brown, Cai and DasGupta 2003).
    """
    tail = (1.0 - level) / 2.0
    shape = count + 0.5
    return float(gammaincinv(shape, tail)) / exposure, float(gammaincinv(shape, 1.0 - tail)) / exposure


@dataclass(frozen=True)
class TrendTest:
    """A test of "no trend" (a constant rate) over the window.

    ``statistic`` is the test's statistic (Laplace: a standard normal under no trend, negative for a
    falling rate), ``p_value`` its two-sided p-value, ``points`` the incidents it used (an incident that
    sets an end of the window carries no information on the trend and is left out).
    """

    test: str
    statistic: float | None
    p_value: float | None
    points: int
    verdict: str

    def to_dict(self) -> dict[str, Any]:
        return {"test": self.test, "statistic": self.statistic, "p_value": self.p_value, "verdict": self.verdict}


@dataclass(frozen=True)
class PowerLawFit:
    """MIL-HDBK-189's test and fit of a power-law process: cumulative intensity ``(t / scale) ** shape``.

    The time ``t`` runs from the window's start, so the shape means burn-in (``< 1``) or ageing (``> 1``)
    when the window starts with the cluster (or a big change to it). The rate at the window's end is
    ``shape`` times the window's average.
    """

    shape: float | None
    shape_low: float | None
    shape_high: float | None
    scale_hours: float | None
    statistic: float | None
    p_value: float | None
    points: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "test": "MIL-HDBK-189",
            "statistic": self.statistic,
            "p_value": self.p_value,
            "shape": self.shape,
            "shape_low": self.shape_low,
            "shape_high": self.shape_high,
            "scale_hours": self.scale_hours,
        }


@dataclass(frozen=True)
class WeibullFit:
    """The Weibull distribution of the times between incidents: ``P(gap > x) = exp(-(x / scale) ** shape)``.

    ``gaps`` is the number of whole gaps used; ``censored`` the gap still open at the window's end.
    """

    shape: float | None
    shape_low: float | None
    shape_high: float | None
    scale_hours: float | None
    gaps: int
    censored: int
    verdict: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "shape": self.shape,
            "shape_low": self.shape_low,
            "shape_high": self.shape_high,
            "scale_hours": self.scale_hours,
            "gaps": self.gaps,
            "verdict": self.verdict,
        }


def laplace_test(u: Sequence[float] | NDArray[np.float64]) -> tuple[float, float]:
    """Laplace's statistic and two-sided p-value for points ``u`` in [0, 1] (times / window).

    Under a constant rate the points are uniform, so ``U = sqrt(12 m) (mean(u) - 1/2)`` is close to a
    standard normal; a falling rate crowds them early (``U < 0``).
    """
    x = np.asarray(u, dtype=float)
    stat_u = math.sqrt(12.0 * x.size) * (float(x.mean()) - 0.5)
    return stat_u, float(erfc(abs(stat_u) / math.sqrt(2.0)))


def mil_hdbk_189_test(
    u: Sequence[float] | NDArray[np.float64], level: float = LEVEL
) -> tuple[float, float, float, float, float]:
    """MIL-HDBK-189's test of a power-law process on points ``u`` in (0, 1]: statistic, p-value, shape and
    its interval.

    Given the count, a power-law process of shape ``b`` puts its points at ``u`` with ``P(U <= u) = u ** b``,
    so ``-b ln u`` are unit exponentials and ``2 b S``, ``S = -sum(ln u)``, is chi-square with ``2 m``
    degrees of freedom. Hence the statistic ``2 S`` (chi-square under no trend), the shape's estimate
    ``m / S`` and its exact interval from the Gamma(``m``) quantiles.
    """
    x = np.asarray(u, dtype=float)
    m = x.size
    s = float(-np.log(x).sum())
    p = min(1.0, 2.0 * min(float(gammainc(m, s)), float(gammaincc(m, s))))
    tail = (1.0 - level) / 2.0
    return 2.0 * s, p, m / s, float(gammaincinv(m, tail)) / s, float(gammaincinv(m, 1.0 - tail)) / s


def _bisect_log(f: Callable[[float], float], lo: float, hi: float) -> float:
    """The root of an increasing ``f`` between ``lo`` and ``hi`` (``f(lo) < 0 < f(hi)``), halving ``ln k``."""
    a, b = math.log(lo), math.log(hi)
    for _ in range(200):
        mid = 0.5 * (a + b)
        if f(math.exp(mid)) < 0:
            a = mid
        else:
            b = mid
        if b - a < 1e-13:
            break
    return math.exp(0.5 * (a + b))


def fit_weibull(
    gaps: Sequence[float] | NDArray[np.float64],
    censored: Sequence[float] | NDArray[np.float64] = (),
    level: float = LEVEL,
) -> tuple[float, float, float, float]:
    """Maximum-likelihood Weibull shape and scale of ``gaps``, and a profile-likelihood interval of the shape.

    ``censored`` are gaps known only to be longer than their value (the one open at the window's end).
    Returns ``(shape, scale, shape_low, shape_high)``. With the scale profiled out (``scale ** k`` = the
    sum of ``x ** k`` over all gaps / the ``r`` whole ones), the log-likelihood of the shape is

        l(k) = r ln k + (k - 1) sum(ln x_whole) - r ln(sum(x_all ** k) / r) - r,

    whose derivative ``-r g(k)``, ``g(k) = mean_k(ln x_all) - 1/k - mean(ln x_whole)`` with ``mean_k``
    weighted by ``x ** k``, is increasing in ``k``: one root, found by bisection. The interval holds the
    shapes whose ``l`` is within half the chi-square(1) quantile of the maximum (Wilks).
    Needs at least two different whole gaps, all positive.
    """
    whole = np.asarray(gaps, dtype=float)
    cens = np.asarray(censored, dtype=float)
    if whole.size < 2 or np.any(whole <= 0) or np.any(cens <= 0) or float(whole.min()) == float(whole.max()):
        raise ValueError("a Weibull fit needs at least two different positive gaps")
    top = float(max(whole.max(), cens.max(initial=0.0)))
    # Gaps divided by the longest: every x ** k is at most 1, so no k overflows (the constant this
    # subtracts from l(k) does not move its maximum or the interval).
    lw = np.log(whole / top)
    la = np.concatenate([lw, np.log(cens / top)])
    r = lw.size
    mean_w, sum_w = float(lw.mean()), float(lw.sum())

    def log_sum(k: float) -> tuple[float, NDArray[np.float64]]:
        z = k * la
        zmax = float(z.max())
        w = np.exp(z - zmax)
        return zmax + math.log(float(w.sum())), w

    def g(k: float) -> float:
        _, w = log_sum(k)
        return float((w * la).sum() / w.sum()) - 1.0 / k - mean_w

    def profile(k: float) -> float:
        return r * math.log(k) + (k - 1.0) * sum_w - r * (log_sum(k)[0] - math.log(r)) - r

    lo, hi = 0.1, 10.0
    while g(lo) > 0 and lo > 1e-6:
        lo /= 10.0
    while g(hi) < 0 and hi < 1e6:
        hi *= 10.0
    k = _bisect_log(g, lo, hi)
    scale = top * math.exp((log_sum(k)[0] - math.log(r)) / k)
    target = profile(k) - float(gammaincinv(0.5, level))  # half the chi-square(1) quantile
    below = k / 2.0
    while profile(below) > target and below > 1e-8:
        below /= 2.0
    above = k * 2.0
    while profile(above) > target and above < 1e8:
        above *= 2.0
    low = _bisect_log(lambda x: profile(x) - target, below, k)  # the profile rises to its maximum at k ...
    high = _bisect_log(lambda x: target - profile(x), k, above)  # ... and falls after it
    return k, scale, low, high


# -- the fit ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ComponentFit:
    """One component's rate, fitted from its ``count`` of incidents over ``exposure_gpu_hours``.

    ``count`` and ``exposure_gpu_hours`` are the evidence behind the rate (kept for a model of rate
    uncertainty); ``rate_low``/``rate_high`` its 90 % interval; ``llama3_rate`` the rate of the Llama 3
    cause of the same name (None for another name); ``gpus_affected`` the GPUs its incidents took out,
    summed (None when the log has no such column).
    """

    name: str
    category: str
    count: int
    exposure_gpu_hours: float
    rate_per_gpu_hour: float
    rate_low: float
    rate_high: float
    llama3_rate: float | None = None
    gpus_affected: int | None = None

    @classmethod
    def of(
        cls,
        name: str,
        category: str,
        count: int,
        exposure: float,
        llama3_rate: float | None = None,
        gpus_affected: int | None = None,
    ) -> ComponentFit:
        """The fit of ``count`` incidents over ``exposure`` GPU-hours."""
        low, high = rate_interval(count, exposure)
        return cls(name, category, count, exposure, count / exposure, low, high, llama3_rate, gpus_affected)

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "category": self.category,
            "count": self.count,
            "exposure_gpu_hours": self.exposure_gpu_hours,
            "rate_per_gpu_hour": self.rate_per_gpu_hour,
            "rate_low": self.rate_low,
            "rate_high": self.rate_high,
            "llama3_rate_per_gpu_hour": self.llama3_rate,
            "gpus_affected": self.gpus_affected,
        }


@dataclass(frozen=True)
class FitResult:
    """What an incident log says: the window, each component's rate, the trend and the Weibull shape.

    ``start_given``/``end_given`` say whether an end of the window was given or is an incident (the first
    or the last); ``notes`` are what the reader should know (a window from the incidents is too short).
    """

    source: str
    gpus: int
    start: datetime
    end: datetime
    start_given: bool
    end_given: bool
    zoned: bool
    components: tuple[ComponentFit, ...]
    total: ComponentFit
    trend: TrendTest
    power_law: PowerLawFit
    weibull: WeibullFit
    notes: tuple[str, ...]

    @property
    def hours(self) -> float:
        return (self.end - self.start).total_seconds() * _HOURS_PER_SECOND

    @property
    def exposure_gpu_hours(self) -> float:
        return self.gpus * self.hours

    def window_text(self, which: str) -> str:
        """The window's ``"start"`` or ``"end"`` as ISO 8601."""
        return _iso(self.start if which == "start" else self.end, self.zoned)

    def scenario_name(self, base_name: str) -> str:
        days = f"{self.hours / 24.0:,.1f}".removesuffix(".0")
        head = f"Fitted from {clean(self.source, 60)} ({self.gpus:,} GPUs, {days} days)"
        _, sep, rest = base_name.partition(_OTHER_INPUTS)
        if sep and base_name.startswith("Fitted from "):  # refitting a fitted scenario: name its base once
            base_name = rest
        name = f"{head}{_OTHER_INPUTS}{base_name}"
        return name if len(name) <= NAME_MAX_LEN else name[: NAME_MAX_LEN - 3].rstrip() + "..."

    def scenario(self, base: Scenario) -> Scenario:
        """``base`` with this log's components and rates; every other input (GPUs, days, checkpointing,
        detection, restart, planned interruptions, trials) stays the base's. Validated: raises
        :class:`~.scenario_io.ScenarioError` if a rate is out of range."""
        comps = tuple(Component(c.name, c.category, c.rate_per_gpu_hour) for c in self.components)
        return validate(base.replace(name=self.scenario_name(base.name), components=comps))

    def to_json_dict(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "window": {
                "start": self.window_text("start"),
                "end": self.window_text("end"),
                "hours": self.hours,
                "start_from": "given" if self.start_given else "first incident",
                "end_from": "given" if self.end_given else "last incident",
            },
            "gpus": self.gpus,
            "level": LEVEL,
            "components": [c.to_dict() for c in self.components],
            "total": self.total.to_dict(),
            "trend": self.trend.to_dict(),
            "power_law": self.power_law.to_dict(),
            "weibull": self.weibull.to_dict(),
            "notes": list(self.notes),
        }


_OTHER_INPUTS = ", other inputs from "


def _shape_words(low: float, high: float) -> str:
    if high < 1.0:
        return "below 1"
    if low > 1.0:
        return "above 1"
    return "consistent with 1"


def _trend(
    hours: NDArray[np.float64], window: float, start_given: bool, end_given: bool
) -> tuple[TrendTest, PowerLawFit]:
    # An end of the window that is an incident is where the observation stopped, not an observation
    # (given it, the others are uniform under a constant rate), so it is left out.
    u = hours / window
    u = u[1:] if not start_given else u
    u = u[:-1] if not end_given else u
    m = int(u.size)
    if m < MIN_POINTS:
        words = f"too few incidents ({m} inside the window) to test for a trend"
        return TrendTest("Laplace", None, None, m, words), PowerLawFit(None, None, None, None, None, None, m)
    stat_u, p = laplace_test(u)
    # An incident at the very start (tied with the first one) has ln u = -inf: no power law puts one there.
    inside = u[u > 0]
    pl = PowerLawFit(None, None, None, None, None, None, int(inside.size))
    if inside.size >= MIN_POINTS:
        chi2, p_pl, shape, low, high = mil_hdbk_189_test(inside)
        n_counted = inside.size + (0 if end_given else 1)
        scale = window * math.exp(-math.log(n_counted) / shape)  # (T / scale) ** shape = n, without overflow
        pl = PowerLawFit(shape, low, high, scale, chi2, p_pl, int(inside.size))
    if p < 1.0 - LEVEL:
        direction = "rate falling" if stat_u < 0 else "rate rising"
        meaning = "burn-in" if stat_u < 0 else "ageing or wear-out"
    else:
        direction, meaning = "no trend", "constant rate"
    words = f"{direction} (Laplace p = {p:.2g})"
    if pl.shape is not None and pl.shape_low is not None and pl.shape_high is not None:
        words += f", power-law shape {pl.shape:.2f} ({pl.shape_low:.2f}-{pl.shape_high:.2f})"
    words += f": {meaning}"
    if direction != "no trend" and pl.shape is not None:
        words += f"; the rate at the window's end is about {pl.shape:.2f}x its average"
    return TrendTest("Laplace", stat_u, p, m, words), pl


def _weibull(hours: NDArray[np.float64], window: float, end_given: bool, trend: bool) -> tuple[WeibullFit, int]:
    gaps = np.diff(hours)
    ties = int(np.count_nonzero(gaps <= 0))
    gaps = gaps[gaps > 0]
    open_gap = window - float(hours[-1]) if end_given else 0.0
    cens = np.array([open_gap]) if open_gap > 0 else np.empty(0)
    if gaps.size < MIN_POINTS or float(gaps.min()) == float(gaps.max()):
        words = f"too few different times between incidents ({gaps.size}) to fit a shape"
        return WeibullFit(None, None, None, None, int(gaps.size), int(cens.size), words), ties
    k, scale, low, high = fit_weibull(gaps, cens)
    where = _shape_words(low, high)
    meaning = {
        "below 1": "incidents come in bursts (one is often soon followed by another)",
        "above 1": "incidents are more regular than at random",
        "consistent with 1": "as at random",
    }[where]
    words = f"times between incidents: Weibull shape {k:.2f} ({low:.2f}-{high:.2f}), {where}: {meaning}"
    if trend:
        words += " (a trend alone spreads the gaps a little, pulling the shape below 1)"
    return WeibullFit(k, low, high, scale, int(gaps.size), int(cens.size), words), ties


def _window_time(value: datetime | str | None, what: str) -> datetime | None:
    if value is None or isinstance(value, datetime):
        if value is not None and value.tzinfo is None:
            value = value.replace(tzinfo=_UTC)
        return value
    try:
        return parse_time(value)[0]
    except ValueError as exc:
        raise IncidentLogError(f"{what}: '{clean(value, 40)}' {exc}") from None


def _read_source(path_or_text: str | bytes | os.PathLike[str]) -> tuple[str, str | None]:
    """The log's text and its file's name (None for a log given as text or bytes).

    A ``str`` with a line break is the log itself, any other a path.
    """
    if isinstance(path_or_text, (bytes, bytearray)):
        return _decode(bytes(path_or_text)), None
    if isinstance(path_or_text, str) and ("\n" in path_or_text or "\r" in path_or_text):
        # Through bytes, so that text and files meet the same size limit and byte-order mark rule.
        return _decode(path_or_text.encode("utf-8", "surrogatepass")), None
    data = _read_bytes(path_or_text)
    name = Path(os.fsdecode(os.fspath(path_or_text))).name
    try:
        return _decode(data), name
    except IncidentLogError as exc:
        raise IncidentLogError(f"{clean(name, 80)}: {exc}") from None


def fit_log(
    path_or_text: str | bytes | os.PathLike[str],
    gpus: int,
    start: datetime | str | None = None,
    end: datetime | str | None = None,
) -> FitResult:
    """Fit an incident log of a cluster of ``gpus`` GPUs over the window ``[start, end]``.

    Parameters
    ----------
    path_or_text
        A path, or the log itself (bytes, or text with at least one line break).
    gpus
        GPUs in the cluster the log watched: the exposure is ``gpus`` x the window's hours.
    start, end
        The window (ISO 8601 text or datetimes; no zone means UTC). Each defaults to the first or last
        incident, which makes the window too short by about two gaps between incidents (noted).

    Raises
    ------
    IncidentLogError
        With one line naming the problem (and its line in the file): missing columns, a bad timestamp,
        no incidents, an end not after the start, an incident outside the window, not UTF-8, too large.
    """
    if isinstance(gpus, bool) or not isinstance(gpus, int) or not 1 <= gpus <= 10_000_000:
        raise IncidentLogError(f"gpus: must be a whole number from 1 to 10,000,000 (got {clean(repr(gpus), 30)})")
    t0, t1 = _window_time(start, "start"), _window_time(end, "end")
    if t0 is not None and t1 is not None and t1 <= t0:
        raise IncidentLogError(f"the window's end ({_iso(t1, True)}) is not after its start ({_iso(t0, True)})")
    text, name = _read_source(path_or_text)
    try:
        return _fit(_parse(text, gpus), name or "incident log", gpus, t0, t1)
    except IncidentLogError as exc:
        if name is None:
            raise
        raise IncidentLogError(f"{clean(name, 80)}: {exc}") from None


def _outside(times: list[datetime], t0: datetime | None, t1: datetime | None) -> tuple[int, datetime, str] | None:
    """The first incident (in file order) outside the window, its bound and which side, or None."""
    for i, t in enumerate(times):
        if t0 is not None and t < t0:
            return i, t0, "before the window's start"
        if t1 is not None and t > t1:
            return i, t1, "after the window's end"
    return None


def _component_fits(log: _Log, exposure: float) -> tuple[tuple[ComponentFit, ...], ComponentFit]:
    """Each component's fit, most incidents first (then in Llama 3's order, then the log's), and the total."""
    counts: dict[str, int] = {}
    hit: dict[str, int] = {}
    for i, key in enumerate(log.keys):
        counts[key] = counts.get(key, 0) + 1
        if log.gpus_hit is not None:
            hit[key] = hit.get(key, 0) + (log.gpus_hit[i] or 0)
    llama = _llama3()
    rank = {k: i for i, k in enumerate(llama)}
    first_seen = {k: i for i, k in reversed(list(enumerate(log.keys)))}
    fits = []
    for key in sorted(counts, key=lambda k: (-counts[k], rank.get(k, len(rank)), first_seen[k])):
        ref = llama.get(key)
        fits.append(
            ComponentFit.of(
                log.names[key],
                log.categories.get(key) or (ref.category if ref is not None else "Unknown"),
                counts[key],
                exposure,
                ref.rate_per_gpu_hour if ref is not None else None,
                hit.get(key) if log.gpus_hit is not None else None,
            )
        )
    llama_total = math.fsum(c.rate_per_gpu_hour for c in llama.values())
    all_hit = sum(hit.values()) if log.gpus_hit is not None else None
    return tuple(fits), ComponentFit.of("All components", "", len(log.keys), exposure, llama_total, all_hit)


def _fit(log: _Log, source: str, gpus: int, t0: datetime | None, t1: datetime | None) -> FitResult:
    zoned = log.zoned
    outside = _outside(log.times, t0, t1)
    if outside is not None:
        i, bound, word = outside
        raise IncidentLogError(
            f"line {log.lines[i]}: the incident at {_iso(log.times[i], zoned)} is {word} ({_iso(bound, zoned)}); "
            "widen the window or leave the incident out"
        )
    first, last = min(log.times), max(log.times)
    start = t0 if t0 is not None else first
    end = t1 if t1 is not None else last
    if end <= start:
        why = "one incident" if len(log.times) == 1 else f"all {len(log.times)} incidents at one time"
        raise IncidentLogError(f"{why} and no window: give the window's start and end")
    window = (end - start).total_seconds() * _HOURS_PER_SECOND
    exposure = gpus * window
    order = sorted(range(len(log.times)), key=lambda i: log.times[i])
    hours = np.array([(log.times[i] - start).total_seconds() * _HOURS_PER_SECOND for i in order])

    fits, total = _component_fits(log, exposure)
    trend, power_law = _trend(hours, window, t0 is not None, t1 is not None)
    weibull, ties = _weibull(hours, window, t1 is not None, trend.p_value is not None and trend.p_value < 1 - LEVEL)
    notes = _notes(log, t0 is not None, t1 is not None, ties)
    return FitResult(
        source, gpus, start, end, t0 is not None, t1 is not None, zoned, fits, total, trend, power_law, weibull, notes
    )


def _notes(log: _Log, start_given: bool, end_given: bool, ties: int) -> tuple[str, ...]:
    """What the reader of a fit should know: a window that is too short, times read as UTC, and so on."""
    notes = []
    n = len(log.times)
    if not (start_given and end_given):
        which = {
            (False, False): "runs from the first incident to the last",
            (True, False): "ends at the last incident",
            (False, True): "starts at the first incident",
        }[(start_given, end_given)]
        # For a constant rate, the first and last of n incidents fall on average 1/(n+1) of the window
        # inside its ends, so a window from the first to the last is short by 2/(n+1) and its rates high
        # by about 2/(n-1); half that with one end given.
        bias = (1.0 if start_given or end_given else 2.0) / max(n - 1, 1)
        notes.append(
            f"The window {which}, so it is too short and the rates too high by about {bias:.0%}; "
            "give its start and end when you know them (--start and --end on the command line)."
        )
    if not log.zoned:
        notes.append("The timestamps have no time zone: read as UTC.")
    if ties:
        # Ties are gaps shorter than the timestamps' resolution; leaving them out leaves out the shortest gaps.
        notes.append(
            f"{ties:,} incident(s) at the same time as the one before: left out of the Weibull fit, which makes "
            "its shape a little too high when they are many (finer timestamps avoid it)."
        )
    if log.ignored:
        notes.append(f"Columns ignored: {', '.join(log.ignored)}.")
    llama = _llama3()
    seen = set(log.keys)
    missing = [k for k in llama if k not in seen]
    if len(missing) == len(llama):
        notes.append("No component is named as a Llama 3 cause (Table 5), so there are no Llama 3 rates beside them.")
    elif missing:
        notes.append(f"Llama 3 causes not in the log (no rate fitted): {', '.join(llama[k].name for k in missing)}.")
    return tuple(notes)


# -- synthetic logs --------------------------------------------------------------------------------------

#: The shipped sample log (``data/sample_incidents.csv``): a synthetic cluster in burn-in.
SAMPLE_GPUS = 2048
SAMPLE_DAYS = 60.0
SAMPLE_SHAPE = 0.7
SAMPLE_SEED = 20250106
SAMPLE_START = datetime(2025, 1, 6, tzinfo=_UTC)
#: GPUs an incident takes out, by category, in synthetic logs: one GPU, or one 8-GPU server.
_GPUS_HIT = {"GPU": 1, "Host": 8, "Unplanned Maintenance": 8, "Network": 8}


def sample_components() -> tuple[Component, ...]:
    """The sample's causes: Llama 3's 18 and a storage cause Llama 3 does not list, at rates (averaged
    over the window) that fall to Llama 3's on the window's last day: a power law's rate at the end is
    its shape times its average."""
    llama_hours = LLAMA3_GPUS * LLAMA3_DAYS * 24.0
    # The storage cause at the rate of 10 incidents in the Llama 3 snapshot, to show a cause kept by its own name.
    comps = (*llama3_components(), Component("Filesystem Hang", "Storage", 10 / llama_hours))
    return tuple(Component(c.name, c.category, c.rate_per_gpu_hour / SAMPLE_SHAPE) for c in comps)


def _exponentials(rng: np.random.Generator, limit: float) -> NDArray[np.float64]:
    """Arrival times of a unit-rate Poisson process up to ``limit``, from uniforms only (numpy keeps the
    stream of ``random()`` fixed across versions, not that of its other distributions)."""
    chunk = int(limit + 5.0 * math.sqrt(limit) + 16)
    out: list[NDArray[np.float64]] = []
    last = 0.0
    while True:
        a = last + np.cumsum(-np.log1p(-rng.random(chunk)))
        out.append(a[a <= limit])
        if a[-1] > limit:
            return np.concatenate(out)
        last = float(a[-1])


def generate_log(
    components: Sequence[Component],
    gpus: int,
    days: float,
    *,
    shape: float = 1.0,
    process: str = "power-law",
    seed: int = 0,
    start: datetime = SAMPLE_START,
    comment: str = "",
) -> str:
    """A synthetic incident log (CSV text): a known process, for tests and the sample.

    Parameters
    ----------
    components
        The causes; each ``rate_per_gpu_hour`` is its rate averaged over the window.
    gpus, days
        The cluster and the window, which starts at ``start``.
    shape, process
        ``"power-law"``: a Poisson process whose expected count by time ``t`` is ``E (t / T) ** shape``
        (``E`` = the summed rates x gpus x hours ``T``), made by stretching the times of a unit-rate
        Poisson process; ``shape < 1`` is burn-in, 1 a constant rate. ``"renewal"``: times between
        incidents drawn independently from a Weibull of this shape with mean ``T / E``, the first from the
        start; ``shape < 1`` makes bursts without a lasting trend.
    seed
        Seed of :func:`numpy.random.default_rng`; only uniform draws are used.
    comment
        Lines written first, each as ``# ...``.

    Each incident's cause is drawn in proportion to the rates, so every cause follows the same shape. Its
    GPUs affected: 1 for the GPU category, 8 (a server) for Host, Network and Unplanned Maintenance, else
    0. Times are written in UTC to the second, rounded down.
    """
    rng = np.random.default_rng(seed)
    total_hours = days * 24.0
    rates = np.array([c.rate_per_gpu_hour for c in components])
    expected = float(rates.sum()) * gpus * total_hours
    if process == "power-law":
        t = total_hours * (_exponentials(rng, expected) / expected) ** (1.0 / shape)
    elif process == "renewal":
        t = _renewal_times(rng, total_hours / expected / math.gamma(1.0 + 1.0 / shape), shape, total_hours)
    else:
        raise ValueError(f"process must be 'power-law' or 'renewal' (got {process!r})")
    cum = np.cumsum(rates)
    which = np.searchsorted(cum, rng.random(t.size) * cum[-1], side="right")
    which = np.minimum(which, len(components) - 1)
    lines = [f"# {line}" for line in comment.splitlines()]
    lines.append("timestamp,component,category,gpus_affected")
    for hours, i in zip(t, which):
        c = components[int(i)]
        when = start + timedelta(seconds=math.floor(float(hours) * 3600.0))
        name = f'"{c.name}"' if "," in c.name else c.name
        lines.append(f"{_iso(when, True)},{name},{c.category},{min(gpus, _GPUS_HIT.get(c.category, 0))}")
    return "\n".join(lines) + "\n"


def _renewal_times(rng: np.random.Generator, scale: float, shape: float, limit: float) -> NDArray[np.float64]:
    out: list[NDArray[np.float64]] = []
    last = 0.0
    chunk = 256
    while True:
        gaps = scale * (-np.log1p(-rng.random(chunk))) ** (1.0 / shape)
        a = last + np.cumsum(gaps)
        out.append(a[a <= limit])
        if a[-1] > limit:
            return np.concatenate(out)
        last = float(a[-1])


def sample_log_text() -> str:
    """The shipped sample log, ``data/sample_incidents.csv``, as :func:`generate_log` makes it."""
    comment = (
        "Synthetic incident log: not real data. Made by planner_gui.core.incidents.generate_log: a power-law\n"
        f"process of shape {SAMPLE_SHAPE} (burn-in: the rate falls to Llama 3's on the last day), Llama 3's 18\n"
        f"causes and a storage cause, {SAMPLE_GPUS:,} GPUs, {SAMPLE_DAYS:g} days from {_iso(SAMPLE_START, True)}, "
        f"seed {SAMPLE_SEED}.\n"
        "Regenerate: python -m planner_gui.core.incidents > planner_gui/core/data/sample_incidents.csv"
    )
    return generate_log(
        sample_components(),
        SAMPLE_GPUS,
        SAMPLE_DAYS,
        shape=SAMPLE_SHAPE,
        seed=SAMPLE_SEED,
        start=SAMPLE_START,
        comment=comment,
    )


if __name__ == "__main__":
    sys.stdout.write(sample_log_text())
