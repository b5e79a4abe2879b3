"""Bad nodes' expectations (docs/model.md, "Bad nodes"): the job's bad nodes and their extra failures over a window.

On the profile's clock ``h`` (the rate multiplier integrated from the job's start) every rate below is at multiplier
1. A good node fails by the bad classes at ``lam`` per hour, a bad one at ``M lam``; of the job's ``N`` nodes ``B(h)``
are bad, ``B(0) = round(s N)``. At each node failure (rate ``lam (N + (M - 1) B)``) the failed node is a bad one
with the chance ``M B / (N + (M - 1) B)``, the failed node is pulled with the chance ``p`` (else a healthy one), and
the replacement is bad with the pool's share ``q``. So, while healthy nodes remain,

    E[dB/dh] = lam (N + (M - 1) B) q - lam M B p.

* **Unlimited pool** (``q = s``): linear in ``B``, so its expectation solves it exactly:
  ``E[B](h) = B_inf + (B(0) - B_inf) exp(-k h)`` with ``k = lam (M p - (M - 1) s)`` and ``B_inf = lam s N / k``
  while healthy nodes remain to be pulled by mistake. :func:`closed_form_holds` takes it where that is sure: every
  failed node pulled (``p = 1``), or ``k > 0`` and ``max(B(0), B_inf)`` ten standard deviations (``10 sqrt(N)``)
  below ``N - 1``. Elsewhere (``k <= 0``: the bad nodes grow until no healthy one is left, and then the failed node
  is pulled) the mean equations below are integrated with that edge, an approximation.
* **Finite pool** of ``S`` spares, ``P`` of them bad (as they will come back from repair), ``q = (P + r) / (S + 1)``
  with ``r`` the pulled node coming back bad (chance ``f`` for a bad one): the product of the failure rate and the
  pool's share makes the equations of the expectations not close. :func:`bad_expected` then integrates them with the
  share taken at its mean (``E[B P] = E[B] E[P]``), whose error is the covariance of the two counts over ``S + 1``:
  about ``1 / (N s)`` of the extra failures. The Monte Carlo, checked against the reference simulator, has none.
  Within one node of the edge the failed node is pulled (the chance of a right pull rises from ``p`` to 1 there).

The extra failures to ``h`` are ``(M - 1) lam int_0^h E[B]``, shared among the bad classes by their rates.
"""

from __future__ import annotations

import math

import numpy as np

from ..model.scenario import Scenario
from ..model.scopes import class_scopes

__all__ = [
    "EDGE_SIGMAS",
    "BadExpectation",
    "bad_classes",
    "bad_exact",
    "bad_expected",
    "bad_rates",
    "closed_form_holds",
]

#: Steps of the finite pool's integration per unit of ``lam M h`` (each a fourth-order Runge-Kutta step), at least.
_STEPS_PER_UNIT = 64
_MIN_STEPS = 256


def bad_classes(sc: Scenario) -> np.ndarray:
    """Per failure class (:attr:`.scenario.Scenario.failure_components`), whether a bad node fails by it more often
    (docs/model.md, "Bad nodes"): the causes that take one node, drawn as a Poisson stream (not a node life of
    another shape, not a silent corruption found late), with a rate above 0."""
    sdc = sc.sdc_component if sc.uses_sdc else None
    return np.array(
        [
            scope == "node" and sc.weibull_shape_of(c) == 1.0 and c is not sdc and c.rate_per_gpu_hour > 0
            for c, scope in zip(sc.failure_components, class_scopes(sc))
        ],
        dtype=bool,
    )


def bad_rates(scenario: Scenario, rates: np.ndarray | None = None) -> np.ndarray:
    """Per failure class, a good node's failures per hour by it where a bad node fails more often by it (0
    elsewhere), from the classes' ``rates`` per GPU-hour (None: the components' own, as given)."""
    if rates is None:
        rates = np.array([c.rate_per_gpu_hour for c in scenario.failure_components], dtype=float)
    mask = bad_classes(scenario)
    out: np.ndarray = np.where(mask, np.asarray(rates, dtype=float) * scenario.gpus / max(scenario.job_nodes, 1), 0.0)
    return out


def bad_exact(scenario: Scenario) -> bool:
    """Whether the expected failures of ``scenario`` are exact where bad nodes change them: no bad nodes, or the
    closed form of an unlimited pool (:func:`closed_form_holds`) at rates known exactly; else they are the mean
    equations' approximation (a finite pool, the posterior's mean rates, or bad nodes that may run out of healthy
    ones to pull by mistake)."""
    if not scenario.uses_bad:
        return True
    return closed_form_holds(scenario, float(bad_rates(scenario).sum())) and not scenario.rate_uncertainty


#: How many standard deviations of the job's bad count (about ``sqrt(N)``) its expectation must stay below the
#: edge where no healthy node is left to pull by mistake for the linear closed form to hold.
EDGE_SIGMAS = 10.0


def closed_form_holds(scenario: Scenario, lam: float) -> bool:
    """Whether the unlimited pool's linear closed form gives the expectations: an unlimited pool, and either every
    failed node pulled (``p = 1``: the edge rule never applies) or the bad count's expectation settling far below the
    edge where no healthy node is left (:data:`EDGE_SIGMAS` of ``sqrt(N)`` below ``N - 1``, ``k > 0``)."""
    if scenario.finite_pool:
        return False
    s, m, p, n = scenario.bad_share, scenario.bad_multiplier, scenario.diagnosis_p, float(scenario.job_nodes)
    if p >= 1.0 or lam <= 0:
        return True
    k = lam * (m * p - (m - 1.0) * s)
    if k <= 0:
        return False
    top = max(float(round(s * n)), lam * s * n / k)
    return top + EDGE_SIGMAS * math.sqrt(n) < n - 1.0


class BadExpectation:
    """The expectations of :func:`bad_expected` at the times asked: the job's bad nodes, and from the job's start
    their failures (all bad classes together)."""

    def __init__(self, bad: np.ndarray, area: np.ndarray, lam: float, multiplier: float, exact: bool) -> None:
        self.bad = bad
        #: The extra failures of bad nodes (beyond a good node's rate), and all their failures.
        self.extra = (multiplier - 1.0) * lam * area
        self.failures = multiplier * lam * area
        #: Whether they are exact (an unlimited pool) or the finite pool's mean-share integration.
        self.exact = exact


def bad_expected(scenario: Scenario, lam: float, hs: np.ndarray) -> BadExpectation:
    """The job's expected bad nodes and the expected extra failures of bad nodes to each of ``hs`` (the profile's
    clock from the job's start), a good node failing by the bad classes at ``lam`` per hour."""
    hs = np.asarray(hs, dtype=float)
    n = float(scenario.job_nodes)
    s, m, p = scenario.bad_share, scenario.bad_multiplier, scenario.diagnosis_p
    b0 = float(round(s * n))
    sp = scenario.spares
    pool = None if sp is None or sp.spare_nodes is None else float(sp.spare_nodes)
    if lam <= 0 or not scenario.uses_bad:
        return BadExpectation(np.full(hs.shape, b0), np.zeros(hs.shape), lam, m, True)
    if closed_form_holds(scenario, lam):
        k = lam * (m * p - (m - 1.0) * s)
        if abs(k) * float(np.max(hs, initial=0.0)) < 1e-9:  # (no drift: B grows at lam s N a hour)
            bad = b0 + lam * s * n * hs
            area = b0 * hs + 0.5 * lam * s * n * hs * hs
        else:
            b_inf = lam * s * n / k
            decay = -np.expm1(-k * hs)
            bad = b_inf + (b0 - b_inf) * np.exp(-k * hs)
            area = b_inf * hs + (b0 - b_inf) * decay / k
        bad = np.clip(bad, 0.0, n)
        return BadExpectation(bad, area, lam, m, True)
    f = scenario.repair_fail_p
    p0 = float(round(s * pool)) if pool is not None else 0.0

    def slope(b: float, pb: float) -> tuple[float, float, float]:
        b = min(max(b, 0.0), n)
        rate = lam * (n + (m - 1.0) * b)
        # (within one node of the edge no healthy node is left to pull instead: the failed one is pulled)
        right = p + (1.0 - p) * min(max(b - (n - 1.0), 0.0), 1.0)
        pulled = lam * m * b * right
        if pool is None:  # (an unlimited pool: replacements bad at the share, the pulled node gone)
            return rate * s - pulled, 0.0, b
        back = pulled * f
        new = (rate * pb + back) / (pool + 1.0)
        return new - pulled, back - new, b

    top = float(np.max(hs, initial=0.0))
    steps = max(_MIN_STEPS, math.ceil(_STEPS_PER_UNIT * lam * m * top))
    dt = top / steps if steps else 0.0
    grid = np.linspace(0.0, top, steps + 1)
    b_path = np.empty(steps + 1)
    a_path = np.empty(steps + 1)
    b, pb, area = b0, p0, 0.0
    b_path[0], a_path[0] = b, area
    for i in range(steps):  # fourth-order Runge-Kutta on (B, P, int B)
        k1 = slope(b, pb)
        k2 = slope(b + 0.5 * dt * k1[0], pb + 0.5 * dt * k1[1])
        k3 = slope(b + 0.5 * dt * k2[0], pb + 0.5 * dt * k2[1])
        k4 = slope(b + dt * k3[0], pb + dt * k3[1])
        b = min(max(b + dt / 6.0 * (k1[0] + 2 * k2[0] + 2 * k3[0] + k4[0]), 0.0), n)
        pb += dt / 6.0 * (k1[1] + 2 * k2[1] + 2 * k3[1] + k4[1])
        area += dt / 6.0 * (k1[2] + 2 * k2[2] + 2 * k3[2] + k4[2])
        b_path[i + 1], a_path[i + 1] = b, area
    return BadExpectation(np.interp(hs, grid, b_path), np.interp(hs, grid, a_path), lam, m, False)
