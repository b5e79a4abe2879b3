"""The summary of a per-trial quantity (mean, standard error, percentiles), for every report of a run."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["Summary", "summarize"]


@dataclass(frozen=True)
class Summary:
    """Mean, its standard error, and the 5th, 50th and 95th percentiles of a per-trial quantity."""

    mean: float
    sem: float
    p05: float
    p50: float
    p95: float

    def to_dict(self) -> dict[str, float]:
        return {"mean": self.mean, "sem": self.sem, "p05": self.p05, "p50": self.p50, "p95": self.p95}


def summarize(values: np.ndarray) -> Summary:
    """Summary of a 1-D array of per-trial values (sem is 0 for a single trial)."""
    v = np.asarray(values, dtype=float)
    sem = float(v.std(ddof=1) / np.sqrt(v.size)) if v.size > 1 else 0.0
    p05, p50, p95 = np.percentile(v, [5, 50, 95])
    return Summary(float(v.mean()), sem, float(p05), float(p50), float(p95))
