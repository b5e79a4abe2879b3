"""Synthetic incident logs from a known process, and the shipped sample (data/sample_incidents.csv)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from datetime import datetime, timedelta

import numpy as np
from numpy.typing import NDArray

from ..model.scenario import LLAMA3_DAYS, LLAMA3_GPUS, Component, llama3_components
from .logs import _UTC, _iso

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
