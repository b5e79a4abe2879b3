"""The number grammar of every numeric flag, and the one error a bad flag or value raises (printed as one line, exit
status 2). Below every other module of the command line: :mod:`.flags` and :mod:`.spares_flags` build on it."""

from __future__ import annotations

import argparse
import math
import re

from ..core.util import fmt

__all__ = ["UsageError", "integer_arg", "number_arg", "parse_number", "quoted"]


class UsageError(Exception):
    """A bad flag or value; printed as one line, exit status 2."""


# One grammar for every numeric flag (:data:`..core.util.fmt.NUMBER`, as the window's number boxes read): thousands
# separators only in well-formed groups of three, a fraction and an exponent where the flag takes any number.
_NOT_FINITE = {"inf", "+inf", "-inf", "infinity", "+infinity", "-infinity", "nan", "+nan", "-nan"}
#: Longer values are refused before parsing (no flag needs more, and Python refuses to convert 4,300+ digits).
_MAX_NUMBER_CHARS = 100


def quoted(text: str) -> str:
    return f"'{fmt.clean(text, 40)}'"


def parse_number(text: str, kind: str) -> int | float:
    """``text`` as an int (no fraction or exponent) or float; raises ArgumentTypeError saying what is allowed."""
    value = text.strip(" \t")
    if not value:
        raise argparse.ArgumentTypeError(f"must be {kind} (got an empty value)")
    if len(value) > _MAX_NUMBER_CHARS:
        raise argparse.ArgumentTypeError(
            f"must be {kind} of at most {_MAX_NUMBER_CHARS} characters (got {len(value):,} characters)"
        )
    if not value.isascii():
        raise argparse.ArgumentTypeError(f"must be {kind} written with the ASCII digits 0-9 (got {quoted(text)})")
    if value.lower() in _NOT_FINITE:
        raise argparse.ArgumentTypeError(f"must be a finite number (got {quoted(text)})")
    v = fmt.read_number(value)
    if v is None:
        if re.fullmatch(r"[+-]?[\d,_]+(?:\.\d*)?(?:[eE][+-]?\d+)?", value):
            raise argparse.ArgumentTypeError(
                f"must be {kind}; ',' and '_' may only separate groups of three digits, as in 100,000 or "
                f"100_000 (got {quoted(text)})"
            )
        raise argparse.ArgumentTypeError(f"must be {kind} (got {quoted(text)})")
    if not math.isfinite(v):
        raise argparse.ArgumentTypeError(f"must be a finite number (got {quoted(text)})")
    return v


def number_arg(text: str) -> float:
    return float(parse_number(text, "a number"))


def integer_arg(text: str) -> int:
    v = parse_number(text, "a whole number")
    if isinstance(v, float):
        if not v.is_integer():
            raise argparse.ArgumentTypeError(f"must be a whole number (got {quoted(text)})")
        v = int(v)
    return v
