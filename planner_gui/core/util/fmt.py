"""Numbers for people: 16,384; 3.1 h; 91.2%; "one every 3.1 hours"; and numbers from people (:func:`read_number`,
the one grammar of the command line's flags and the window's number boxes)."""

from __future__ import annotations

import math
import re
import unicodedata

__all__ = [
    "DURATION_TICKS",
    "ERROR_PREFIX",
    "NUMBER",
    "clean",
    "compact",
    "count",
    "duration_hours",
    "every",
    "exact_percent",
    "money",
    "number",
    "percent",
    "plural",
    "read_number",
    "short_duration",
]

#: How the command line begins the one line that says why it stopped (what the window reads from its processes).
ERROR_PREFIX = "planner-gui: error: "

#: A number as people type it: ASCII digits; thousands separators only in well-formed groups of three
#: ("100,000", "1,000.5", "100_000"), never "1,5" (which means 1.5 in many locales); a fraction and an exponent.
NUMBER = re.compile(
    r"[+-]?(?:(?P<int>\d{1,3}(?:,\d{3})+|\d{1,3}(?:_\d{3})+|\d+)(?:\.(?P<frac>\d*))?|\.(?P<frac_only>\d+))"
    r"(?:[eE](?P<exp>[+-]?\d+))?",
    re.ASCII,
)


def read_number(text: str) -> int | float | None:
    """``text`` (spaces around it allowed) as :data:`NUMBER` reads it: an int when it has no fraction or exponent,
    else a float (``inf`` for ``1e400``); None when it is no such number. Callers bound its length first (Python
    refuses to convert 4,300+ digits)."""
    m = NUMBER.fullmatch(text.strip(" \t"))
    if m is None:
        return None
    plain = m.group(0).replace(",", "").replace("_", "")
    if m.group("frac") is None and m.group("frac_only") is None and m.group("exp") is None:
        return int(plain)
    return float(plain)


def number(v: float) -> str:
    """A number in a message: whole numbers with separators up to 10^15 (beyond, a float's digits are noise:
    1e30 would read 1,000,000,000,000,000,019,884,624,838,656), else as ``g`` writes it (1e+300, 0.01)."""
    if isinstance(v, int) and abs(v).bit_length() > 1024:  # too large for a float
        return f"a whole number of {len(str(abs(v))):,} digits"
    return f"{int(v):,}" if float(v).is_integer() and abs(v) < 1e15 else f"{float(v):g}"


def count(v: float, digits: int = 0) -> str:
    """Thousands separators: ``count(16384) == '16,384'``."""
    return f"{v:,.{digits}f}"


def plural(n: int, word: str) -> str:
    """A whole count and its noun: ``plural(1, "node") == '1 node'``, ``plural(6250, "node") == '6,250 nodes'``."""
    return f"{n:,} {word}{'' if n == 1 else 's'}"


def each(n: int, word: str) -> str:
    """How often, in whole counts of ``word``: ``each(1, "snapshot") == 'each snapshot'``, ``each(4, "snapshot") ==
    'every 4 snapshots'`` (never "every 1 snapshots")."""
    return f"each {word}" if n == 1 else f"every {plural(n, word)}"


def percent(fraction: float, digits: int = 1) -> str:
    """``0.917`` as "91.7%"; a share that rounds to nothing reads "0.0%", never "-0.0%" (a sum's rounding noise)."""
    text = f"{100.0 * fraction:.{digits}f}"
    return f"{text.lstrip('-') if float(text) == 0 else text}%"


#: What stands for an exact expectation the model has no closed form for (two tiers both restoring).
def exact_percent(fraction: float | None, digits: int = 2, why: str = "") -> str:
    """An exact expectation as a percentage, or, when there is none, "none" and ``why`` (e.g. "spares and
    repairs": see :meth:`.results.SimulationResult.no_closed_form`)."""
    if fraction is None:
        return f"none ({why}: Monte Carlo only)" if why else "none (Monte Carlo only)"
    return percent(fraction, digits)


def duration_hours(hours: float) -> str:
    """A duration in the largest sensible unit: 45 s, 12 min, 3.1 h, 5.8 years."""
    if not math.isfinite(hours):
        return "never"
    seconds = hours * 3600.0
    if seconds < 90:
        return f"{seconds:.0f} s" if seconds >= 10 else f"{seconds:.1f} s"
    if hours < 1.5:
        return f"{seconds / 60:.0f} min" if seconds >= 600 else f"{seconds / 60:.1f} min"
    if hours < 48:
        return f"{hours:.1f} h"
    if hours < 24 * 365:
        return f"{hours / 24:.1f} days"
    years = hours / (24 * 365)
    if years < 100:
        return f"{years:.1f} years"
    if years < 1e6:
        return f"{years:,.0f} years"
    return f"{years:.2g} years"  # 7e+288 years, not three hundred digits


def finite_or_none(x: float | None) -> float | None:
    """A number for JSON, which has no infinity nor NaN: ``x`` where it is finite, else None (no failures, an end
    that never finishes)."""
    return None if x is None or not math.isfinite(x) else float(x)


def duration_min(minutes: float) -> str:
    """A duration given in minutes, as :func:`duration_hours` shows it: 0.6 s, 45 s, 2.2 min, 3.0 h, 2.5 days."""
    return duration_hours(minutes / 60.0)


def every(hours: float) -> str:
    """``every(3.09) == 'one every 3.1 hours'``."""
    if not math.isfinite(hours):
        return "none expected"
    text = duration_hours(hours)
    for short, long in ((" s", " seconds"), (" min", " minutes"), (" h", " hours")):
        if text.endswith(short):
            text = text[: -len(short)] + long
            break
    return f"one every {text}"


def compact(v: float) -> str:
    """2.19 T, 1.77 M, 12.3 k, 950."""
    a = abs(v)
    for div, suffix in ((1e12, " T"), (1e9, " B"), (1e6, " M"), (1e3, " k")):
        if a >= div:
            return f"{v / div:.3g}{suffix}"
    return f"{v:.3g}"


def money(usd: float) -> str:
    """Dollars: "$1.77 M", "$950"; under half a cent (a sum's rounding noise), "$0"."""
    return "$0" if abs(usd) < 0.005 else f"${compact(usd)}"


def signed(v: float, digits: int = 2) -> str:
    """A change, signed, with the digits that keep a small one from reading "-0.00": "+1.36", "-0.0012", "0"."""
    if v == 0:
        return "0"
    if abs(v) < 0.5 * 10**-digits:
        return f"{v:+.2g}"
    return f"{v:+.{digits}f}"


def signed_money(usd: float) -> str:
    """A change in dollars, signed: "+$583 k", "-$44.2 M", "$0" (under half a dollar)."""
    if abs(usd) < 0.5:
        return "$0"
    return f"{'+' if usd > 0 else '-'}${compact(abs(usd))}"


#: Characters shown by name rather than as a code point.
_NAMED_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
#: Unicode categories that are never shown as they are: control, format (e.g. bidirectional overrides),
#: surrogate (cannot be encoded), unassigned (a later Unicode may make them format characters), line and
#: paragraph separators.
_ESCAPED_CATEGORIES = frozenset(("Cc", "Cf", "Cs", "Cn", "Zl", "Zp"))
_ELLIPSIS = "..."


def _piece(ch: str) -> str:
    if ch in _NAMED_ESCAPES:
        return _NAMED_ESCAPES[ch]
    if unicodedata.category(ch) not in _ESCAPED_CATEGORIES:
        return ch
    code = ord(ch)
    if code < 0x100:
        return f"\\x{code:02x}"
    if code < 0x10000:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"


def clean(text: str, max_len: int = 80) -> str:
    """``text`` made safe to show on one line: at most ``max_len`` characters, no control characters.

    Control and format characters (Unicode categories Cc and Cf; also unpaired surrogates, unassigned
    code points, and line and paragraph separators) are shown as escapes (``\\n``, ``\\x1b``,
    ``\\u202e``), so user text can neither break a message into several lines nor drive the terminal.
    Longer text keeps its start and its end around "..." (an escape is never cut in two). Cleaning clean
    text changes nothing.
    """
    if not isinstance(text, str):
        text = str(text)
    max_len = max(int(max_len), len(_ELLIPSIS) + 2)
    if len(text) <= max_len and text.isprintable():
        return text
    # Look at no more of a long text than can be shown: its first and last max_len characters.
    if len(text) > 2 * max_len:
        head_src, tail_src, cut = text[:max_len], text[-max_len:], True
    else:
        head_src, tail_src, cut = text, "", False
    pieces = [_piece(ch) for ch in head_src]
    if not cut and sum(map(len, pieces)) <= max_len:
        return "".join(pieces)
    tail_pieces = [_piece(ch) for ch in tail_src] if cut else pieces
    budget = max_len - len(_ELLIPSIS)
    head_budget = budget - budget // 3  # two thirds of the room for the start, a third for the end
    head: list[str] = []
    used = 0
    for p in pieces:
        if used + len(p) > head_budget:
            break
        head.append(p)
        used += len(p)
    tail: list[str] = []
    room = budget - used
    stop = 0 if cut else len(head)  # without a cut, the end must not overlap the start
    for i in range(len(tail_pieces) - 1, stop - 1, -1):
        p = tail_pieces[i]
        if len(p) > room:
            break
        tail.append(p)
        room -= len(p)
    return "".join(head) + _ELLIPSIS + "".join(reversed(tail))


#: Durations (minutes) a duration axis puts its major ticks on: 1 s, 10 s, 1 min, 10 min, 1 h, 10 h, 1 d, ...
DURATION_TICKS = (1 / 60, 10 / 60, 1.0, 10.0, 60.0, 600.0, 1440.0, 14_400.0, 144_000.0, 525_600.0)
_UNITS = ((525_600.0, "y"), (1440.0, "d"), (60.0, "h"), (1.0, "min"), (1 / 60, "s"))


def short_duration(minutes: float, digits: int = 2) -> str:
    """A tick label: 1 s, 20 s, 5 min, 2 h, 10 d, 1 y (``digits`` significant digits, one unit style); the window's
    axes and the report's charts both label with it."""
    for size, unit in _UNITS:
        if minutes >= size * 0.999 or unit == "s":
            v = minutes / size
            if v >= 10**digits - 0.5:  # (99.99 would print as 1e+02)
                return f"{v:,.0f} {unit}"
            return f"{v:.{digits}g} {unit}"
    return f"{minutes:g} min"
