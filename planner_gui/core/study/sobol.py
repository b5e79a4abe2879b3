"""Sobol indices of a study's output over its inputs, from a Sobol (Saltelli) design.

The first-order index of an input is the share of the output's variance that the input explains by
itself; the total index adds its share in every interaction. They are SALib's estimators (Saltelli et al.
2010 for both, on the output standardised), with bootstrap confidence intervals. Where SALib is not
installed (the standalone app), the same estimators are computed here with numpy; a test checks that the
two agree.
"""

from __future__ import annotations

import math
import statistics
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np

from .spec import StudyError
from .store import StudyResults

__all__ = ["CONF_LEVEL", "RESAMPLES", "SobolIndices", "sobol_indices"]

#: Bootstrap resamples and confidence level of the intervals.
RESAMPLES = 100
CONF_LEVEL = 0.95


@dataclass(frozen=True)
class SobolIndices:
    """First-order (``s1``) and total (``st``) indices of ``output``, one per input, with the half-widths
    of their 95% bootstrap intervals."""

    output: str
    inputs: tuple[str, ...]
    s1: np.ndarray
    s1_conf: np.ndarray
    st: np.ndarray
    st_conf: np.ndarray
    base_samples: int
    engine: str  # "SALib" or "numpy"
    caution: str | None = None  # why the indices are not reliable, when they are not

    def to_dict(self) -> dict[str, Any]:
        return {
            "output": self.output,
            "base_samples": self.base_samples,
            "conf_level": CONF_LEVEL,
            "caution": self.caution,
            "inputs": {
                name: {
                    "first_order": float(self.s1[j]),
                    "first_order_conf": float(self.s1_conf[j]),
                    "total": float(self.st[j]),
                    "total_conf": float(self.st_conf[j]),
                }
                for j, name in enumerate(self.inputs)
            },
        }


def _seed(results: StudyResults) -> int:
    """The bootstrap's seed: the study's (SALib treats 0 as 'no seed', so 0 becomes 1)."""
    return int(results.meta["study"]["seed"]) or 1


def sobol_indices(results: StudyResults, output: str = "goodput.mean", *, use_salib: bool = True) -> SobolIndices:
    """The Sobol indices of ``output``; a one-line :class:`StudyError` when they cannot be had."""
    if results.design != "sobol":
        design = {"lhs": "a Latin hypercube", "grid": "a grid"}.get(results.design, f"design '{results.design}'")
        raise StudyError(f"they need a Sobol design (study.design = 'sobol'); this study is {design}")
    if output not in results.columns or results.meta["columns"].get(output) == "text":
        raise StudyError(f"no numeric column '{output}' in the results")
    d = len(results.inputs)
    if results.rows < results.total:
        raise StudyError(
            f"they need every scenario of the design: {results.rows:,} of {results.total:,} are done "
            "(run the study again to finish it)"
        )
    order = np.argsort(results.columns["index"])
    y = np.asarray(results.columns[output], dtype=float)[order]
    if not np.all(np.isfinite(y)):
        raise StudyError(f"'{output}' is missing or not finite in some scenarios; no Sobol indices")
    if np.ptp(y) <= np.finfo(float).eps * max(1.0, float(np.abs(y).max())):
        raise StudyError(f"'{output}' is the same in every scenario: no input moves it, so there are no shares")
    n = y.size // (d + 2)
    seed = _seed(results)
    if use_salib:
        try:
            from SALib.analyze import sobol
        except ImportError:
            use_salib = False
    if use_salib:
        problem = {"num_vars": d, "names": results.inputs, "bounds": [[0.0, 1.0]] * d}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            si = sobol.analyze(
                problem, y, calc_second_order=False, num_resamples=RESAMPLES, conf_level=CONF_LEVEL, seed=seed
            )
        arrays = [np.asarray(si[k], dtype=float) for k in ("S1", "S1_conf", "ST", "ST_conf")]
        engine = "SALib"
    else:
        arrays = list(_numpy_indices(y, d, n, seed))
        engine = "numpy"
    s1, s1_conf, st, st_conf = arrays
    sem = results.numeric(output.rsplit(".", 1)[0] + ".sem") if output.endswith(".mean") else None
    noise = float(np.nanmean(np.asarray(sem, dtype=float)[order] ** 2)) if sem is not None else None
    caution = reliability(y, noise, s1, s1_conf, st, st_conf)
    return SobolIndices(output, tuple(results.inputs), s1, s1_conf, st, st_conf, n, engine, caution)


#: The Monte Carlo noise's most share of the output's variance between scenarios before indices are cautioned.
NOISE_SHARE = 0.1
#: The widest 95% bootstrap half-width (as a share of the variance) before indices are cautioned.
WIDE_CONF = 0.1


def reliability(
    y: np.ndarray,
    noise_var: float | None,
    s1: np.ndarray,
    s1_conf: np.ndarray,
    st: np.ndarray,
    st_conf: np.ndarray,
) -> str | None:
    """Why the indices are not reliable (one line), or None. ``noise_var`` is the mean squared Monte Carlo
    standard error of the scenarios' outputs: variance between scenarios that no input explains."""
    why = []
    spread = float(np.var(y))
    if noise_var is not None and math.isfinite(noise_var) and spread > 0 and noise_var > NOISE_SHARE * spread:
        why.append(
            f"the Monte Carlo noise of each scenario is {min(noise_var / spread, 9.99):.0%} of the variance between "
            "scenarios (use more trials or wider ranges)"
        )
    if max(float(np.max(s1_conf)), float(np.max(st_conf))) > WIDE_CONF:
        why.append(
            f"the 95% intervals are wide (up to +/- {max(float(np.max(s1_conf)), float(np.max(st_conf))):.2f}; use "
            "more samples)"
        )
    if np.any(s1 > st + np.hypot(s1_conf, st_conf)):
        why.append("a first-order index exceeds its total")
    if np.any(s1 + s1_conf < 0) or np.any(st + st_conf < 0):
        why.append("an index is negative")
    return "; ".join(why) if why else None


def _first(a: np.ndarray, ab: np.ndarray, b: np.ndarray) -> np.ndarray:
    var = np.var(np.r_[a, b], axis=0)
    out: np.ndarray = np.mean(b * (ab - a), axis=0) / var
    return out


def _total(a: np.ndarray, ab: np.ndarray, b: np.ndarray) -> np.ndarray:
    var = np.var(np.r_[a, b], axis=0)
    out: np.ndarray = 0.5 * np.mean((a - ab) ** 2, axis=0) / var
    return out


def _numpy_indices(y: np.ndarray, d: int, n: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """SALib's ``sobol.analyze(calc_second_order=False)``, step by step: rows come in blocks of ``d + 2``
    (A, then A with input j from B, then B); the output is standardised; the bootstrap draws the same rows."""
    y = (y - y.mean()) / y.std()
    step = d + 2
    a, b = y[0::step], y[step - 1 :: step]
    r = np.random.default_rng(seed).integers(n, size=(n, RESAMPLES))
    z = statistics.NormalDist().inv_cdf(0.5 + CONF_LEVEL / 2)
    s1, s1c, st, stc = (np.zeros(d) for _ in range(4))
    for j in range(d):
        ab = y[j + 1 :: step]
        s1[j] = _first(a, ab, b)
        st[j] = _total(a, ab, b)
        s1c[j] = z * _first(a[r], ab[r], b[r]).std(ddof=1)
        stc[j] = z * _total(a[r], ab[r], b[r]).std(ddof=1)
    return s1, s1c, st, stc
