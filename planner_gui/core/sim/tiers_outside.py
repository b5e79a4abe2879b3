"""What a trial's window sees of the time line outside it, in steady state (see docs/tiers.md, "Edges").

Interruptions of every kind form one Poisson process of rate ``Lambda = lam_fast + nu`` (``nu =
lam_persistent + mu``: the full renewals), each independently a fast restore, a persistent restore or a
planned one. Looking back from the window's start, the gaps between interruptions are independent
``Exp(Lambda)`` and their kinds independent of them, so the spacing running at the window's start began
``a ~ Exp(Lambda)`` hours before it, with an interruption whose kind is drawn with its probability. When
that interruption was a fast restore, the job's state also depends on the cycle it belongs to (the time
since the last full renewal): how many fast snapshots were completed since that renewal, modulo ``k``
(which places the persistent points), and whether the job is still inside the first restore of a
persistent cycle. Both are drawn exactly (:func:`draw_lookback`):

* the fast restores back to the cycle's renewal are ``n ~ Geometric(nu / Lambda)`` (``n >= 1``), and the
  ``n`` spacings between them and the renewal are independent ``Exp(Lambda)``;
* a spacing adds ``floor((g - D) / s)`` snapshots if it outlives its downtime ``D`` (probability
  ``e^(-Lambda D)``), and by memorylessness that number is then ``Geometric`` with ``P(>= j) = e^(-Lambda s j)``;
  so the snapshots of the cycle are a negative binomial with as many terms as spacings outlived their
  downtime (a binomial count, plus the first spacing's own chance);
* in a cycle opened by a persistent restore, every fast restore during that first restore keeps the
  persistent restore's downtime (the worse of the two tiers); the chain ends at the first spacing that
  outlives it (a geometric index), and if that has not happened by the window the job is still restoring.

The age ``a`` itself is never astronomically long: beyond the downtime and a first persistent point, only
its phase in the periodic upload pattern (``q k`` snapshot cycles) matters, so it is drawn as that phase
when it is long (as :mod:`.edges` does for the single tier). After the window, the time ``b`` to the next
interruption matters only until a snapshot taken after the window has been uploaded, which is certain
within ``b_cap`` hours (:func:`forward_cap`); ``b`` is capped there.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..model.tiers import TierParams
from ..util.streams import stream
from .edges import truncated_exponential
from .rows import uniforms

__all__ = [
    "FAST",
    "PERSISTENT",
    "PLANNED",
    "PROMOTED",
    "Lookback",
    "draw_forward",
    "draw_lookback",
    "forward_cap",
]

#: Kinds of the interruption that starts (or ends) a spacing. PROMOTED: a fast-tier failure during the
#: first restore of a persistent cycle, which restores from the persistent tier (the worse of the two).
FAST, PERSISTENT, PLANNED, PROMOTED = 0, 1, 2, 3

STREAM_LOOKBACK, STREAM_FORWARD = 22, 23

#: Above this mean, a cycle's snapshot count modulo k is drawn uniform (its spread then exceeds any k
#: by orders of magnitude; a Poisson of this mean has a standard deviation of 3e7).
_HUGE_COUNT = 1e15


def downtimes(tp: TierParams) -> np.ndarray:
    """Downtime by the kind of interruption that starts a spacing (indexed by FAST ... PROMOTED)."""
    return np.array([tp.r_fast, tp.r_persistent, tp.r_planned, tp.r_persistent])


@dataclass(frozen=True)
class Lookback:
    """Per trial: the spacing running at the window's start."""

    kind: np.ndarray  # FAST, PERSISTENT, PLANNED or PROMOTED: what started it
    down: np.ndarray  # its downtime
    phase: np.ndarray  # fast snapshots completed in its cycle before it, modulo k (int64)
    age: np.ndarray  # a: hours from its start to the window's start (reduced to a phase when long)


def _geometric_at_most(rng: np.random.Generator, p: float, n: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For each ``n``: whether a Geometric(p) index ``L >= 1`` is at most ``n``, and ``L`` where it is.

    By inversion, with ``log1p``/``expm1`` so that tiny ``p`` and huge ``n`` stay exact.
    """
    u = uniforms(rng, (2, len(n)))
    if p >= 1.0:
        return np.ones(len(n), dtype=bool), np.ones(len(n), dtype=np.int64)
    log_q = math.log1p(-p)  # log(1 - p) < 0
    within = -np.expm1(n * log_q)  # P(L <= n)
    hit = u[0] < within
    # Given L <= n: L = 1 + floor(log(1 - v (1 - (1-p)^n)) / log(1 - p)), v uniform.
    first = 1 + np.floor(np.log1p(-u[1] * within) / log_q)
    return hit, np.minimum(np.maximum(first, 1), n).astype(np.int64)


def _snapshots_mod_k(rng: np.random.Generator, terms: np.ndarray, rho: float, k: int) -> np.ndarray:
    """``S mod k`` for ``S`` a sum of ``terms`` Geometric(``P(>= j) = rho^j``) counts, i.e. negative binomial,
    drawn as a Poisson of a Gamma mean."""
    out = np.zeros(len(terms), dtype=np.int64)
    some = terms > 0
    if k == 1 or not some.any() or rho == 0.0:
        return out
    odds = rho / -math.expm1(math.log(rho))  # rho / (1 - rho), accurate for rho near 1
    mean = rng.gamma(terms[some].astype(float), odds)
    counts = np.zeros(len(mean), dtype=np.int64)
    small = mean < _HUGE_COUNT
    counts[small] = rng.poisson(mean[small]) % k
    counts[~small] = rng.integers(0, k, int((~small).sum()))
    out[some] = counts
    return out


def draw_lookback(tp: TierParams, trials: int, seed: int) -> Lookback:
    """The spacing running at each trial's window start, in steady state (see the module docstring)."""
    rng = stream(seed, STREAM_LOOKBACK)
    u = uniforms(rng, (2, trials))
    big, nu = tp.big, tp.nu
    kind = np.full(trials, FAST, dtype=np.int64)
    if big > 0:
        kind[u[0] < (tp.lam_persistent + tp.mu) / big] = PLANNED
        kind[u[0] < tp.lam_persistent / big] = PERSISTENT
    phase = np.zeros(trials, dtype=np.int64)
    fast = np.flatnonzero(kind == FAST)
    if nu > 0 and big > 0 and fast.size:
        _cycle_state(tp, rng, fast, kind, phase)
    down = downtimes(tp)[kind]
    # The age: exact below L0, else L0 plus its phase in the upload pattern (period q k s).
    period = tp.skip * tp.k * tp.s
    l0 = down + (tp.k + 1) * tp.s + period + tp.upload
    below = -np.expm1(-big * l0)
    with np.errstate(divide="ignore", invalid="ignore"):
        exact_age = -np.log1p(-u[1]) / big if big > 0 else np.zeros(trials)
        v = np.where(u[1] < below, 0.0, (u[1] - below) / (1.0 - below))
    age = np.where(u[1] < below, exact_age, l0 + truncated_exponential(v, big, period))
    return Lookback(kind, down, phase, age)


def _cycle_state(
    tp: TierParams, rng: np.random.Generator, fast: np.ndarray, kind: np.ndarray, phase: np.ndarray
) -> None:
    """For trials whose spacing at the window's start began with a fast restore: the snapshots of its cycle
    before it (modulo k), and whether it is still in the cycle's first (persistent) restore."""
    big = tp.big
    count = fast.size
    persistent_cycle = rng.random(count) < tp.lam_persistent / tp.nu
    n = rng.geometric(tp.nu / big, count).astype(np.int64)  # fast restores back to the renewal (>= 1)
    outlive = {name: math.exp(-big * d) for name, d in (("f", tp.r_fast), ("p", tp.r_persistent), ("q", tp.r_planned))}
    # A planned cycle: the first spacing (downtime r), then n - 1 with the fast downtime.
    terms = (rng.random(count) < outlive["q"]).astype(np.int64) + rng.binomial(np.maximum(n - 1, 0), outlive["f"])
    # A persistent cycle: spacings keep the persistent downtime until the first that outlives it (index L).
    hit, first = _geometric_at_most(rng, outlive["p"], n)
    after = rng.binomial(np.maximum(n - first, 0), outlive["f"])
    terms = np.where(persistent_cycle, np.where(hit, 1 + after, 0), terms)
    promoted = persistent_cycle & ~hit
    phase[fast] = _snapshots_mod_k(rng, terms, math.exp(-big * tp.s), tp.k)
    phase[fast[promoted]] = 0
    kind[fast[promoted]] = PROMOTED


def forward_cap(tp: TierParams) -> float:
    """Hours after the window within which, if the spacing running at its end lasts, a snapshot taken after
    the window has finished uploading: then nothing later can roll the window's work back.

    At most the longest downtime, the rest of an upload in flight, ``k`` cycles to the next persistent point
    and the skipped ones (``q k`` cycles after the upload in flight began), and an upload: doubled as margin.
    """
    longest = max(tp.r_fast, tp.r_persistent, tp.r_planned)
    return 2.0 * (longest + 2.0 * tp.upload + (tp.skip + 1) * tp.k * tp.s + 2.0 * tp.s)


def draw_forward(tp: TierParams, trials: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per trial: ``b`` (hours from the window's end to the next interruption, capped at :func:`forward_cap`),
    whether it was capped (nothing after the window then matters), and that interruption's kind."""
    u = uniforms(stream(seed, STREAM_FORWARD), (2, trials))
    big = tp.big
    cap = forward_cap(tp)
    with np.errstate(divide="ignore"):
        b = -np.log(u[0]) / big if big > 0 else np.full(trials, np.inf)
    capped = b >= cap
    kind = np.full(trials, FAST, dtype=np.int64)
    if big > 0:
        kind[u[1] < (tp.lam_persistent + tp.mu) / big] = PLANNED
        kind[u[1] < tp.lam_persistent / big] = PERSISTENT
    # u[1] < lam_p/Lambda: persistent; < nu/Lambda: planned; else fast (the same order as the look-back)
    return np.minimum(b, cap), capped, kind
