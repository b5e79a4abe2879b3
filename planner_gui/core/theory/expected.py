"""Exact expectations when rates vary: over a rate profile, and over the rates' posterior.

* **Interruptions** are exact: the expected count is the job's expected rate times ``int m(t) dt``,
  the profile's integral over the window (with rate uncertainty, the rate's posterior mean).
* **Goodput** and the other fractions of time: the *piecewise steady state*, each piece's exact fractions
  (:func:`.exact.time_fractions` at its rate) weighted by its share of the window. Exact for one piece;
  otherwise an approximation whose error comes from the transients after each change of rate, which
  :func:`transient_bound` bounds (see its docstring; the Monte Carlo has no such error).
* With rate uncertainty every expectation is also averaged over the posterior of the total rate, with
  the rule of :meth:`.rates.RatePosterior.nodes` (a deterministic quadrature when all components share
  one scale).

Rate uncertainty also splits the variance of each result, by the law of total variance, into the part
the rates' uncertainty causes, ``Var(E[X | rates])``, and the part chance causes, ``E[Var(X | rates)]``
(:func:`uncertainty_summary`).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..model.scenario import Scenario
from .exact import TimeFractions, time_fractions
from .params import Params
from .profiles import Pieces, is_flat, pieces
from .rates import RatePosterior, job_rates

__all__ = [
    "conditional_goodput",
    "piecewise_fractions",
    "rate_nodes",
    "rates_vary",
    "transient_bound",
    "uncertainty_summary",
    "varying_expectation",
]


def rates_vary(scenario: Scenario) -> bool:
    """Whether the scenario's rates vary (a profile that is not flat, or rate uncertainty with evidence)."""
    if not is_flat(scenario.rate_profile, scenario.days):
        return True
    return scenario.rate_uncertainty and bool(RatePosterior.of(scenario.components).uncertain.any())


def rate_nodes(scenario: Scenario, lam: float) -> tuple[np.ndarray, np.ndarray]:
    """Nodes (the job's unplanned rate per hour, before the profile) and weights of the rule for
    expectations over the rates: one node ``lam`` when the rates are certain."""
    posterior = RatePosterior.of(scenario.components)
    if not scenario.rate_uncertainty or not posterior.uncertain.any():
        return np.array([lam]), np.ones(1)
    nodes, weights = posterior.nodes()
    return job_rates(scenario, lam, nodes), weights


def piecewise_fractions(p: Params, tau: float, lams: np.ndarray, pc: Pieces) -> TimeFractions:
    """Each piece's exact fractions at ``lams`` times its multiplier, weighted by its share of the window:
    arrays of the shape of ``lams``."""
    share = pc.lengths / pc.hours
    lam = np.asarray(lams)[..., None] * pc.multipliers
    f = time_fractions(lam, p.mu, tau, p.c, p.r_unplanned, p.r_planned, save_fail=p.save_fail)
    return TimeFractions(*(np.asarray(a) @ share for a in _fields(f)))


def _fields(f: TimeFractions) -> tuple[np.ndarray, ...]:
    return (f.useful, f.checkpoint, f.lost_work, f.recovery, f.planned)


def varying_expectation(scenario: Scenario, p: Params, tau: float | None = None) -> tuple[TimeFractions, float]:
    """The expected fractions of time (at ``tau``, default ``p.tau``) and unplanned interruptions."""
    pc = pieces(scenario.rate_profile, scenario.days)
    lams, w = rate_nodes(scenario, p.lam)
    f = piecewise_fractions(p, p.tau if tau is None else tau, lams, pc)
    fractions = TimeFractions(
        *(np.asarray(float(a @ w)) for a in (f.useful, f.checkpoint, f.lost_work, f.recovery, f.planned))
    )
    return fractions, _mean_lam(scenario, p.lam) * pc.integral()


def _mean_lam(scenario: Scenario, lam: float) -> float:
    """The expected unplanned rate per hour before the profile (the posterior mean, with uncertainty)."""
    posterior = RatePosterior.of(scenario.components)
    if not scenario.rate_uncertainty or not posterior.uncertain.any():
        return lam
    return float(job_rates(scenario, lam, posterior.mean()))


def conditional_goodput(scenario: Scenario, p: Params, lams: np.ndarray) -> np.ndarray:
    """``E[goodput | rate]`` for trials of unplanned rate ``lams`` (per hour, before the profile): the piecewise
    steady state (exact without a profile)."""
    out: np.ndarray = piecewise_fractions(p, p.tau, lams, pieces(scenario.rate_profile, scenario.days)).useful
    return out


def transient_bound(scenario: Scenario, p: Params) -> float:
    """A bound on the error of the piecewise steady state's goodput (0 without a change of rate).

    Couple the run, piece by piece, with a process in the steady state of that piece's rate, fed the same
    interruptions within the piece. After the piece's first interruption the two are the same (every
    interruption restarts the job). Before it, ``B`` hours (``B ~ Exp(Lambda_j)``, ``Lambda_j`` the piece's
    rate of both kinds), their useful compute differs by at most ``B``, the piece's length ``l``, and
    ``D tau / s + 3 tau`` (``D`` the longer downtime: the two differ only in the downtime left and the
    phase of the cycle). And the compute of the cycle running at the piece's end is kept or lost by what
    comes after it, at the next piece's rate instead of this one's: it differs with probability at most
    ``1 - exp(-|lam_j - lam_(j-1)| s)``, by at most ``tau``. So the goodput's error is at most

        (1 / T) sum over changes j of  (1 - exp(-Lambda_j c_j)) / Lambda_j + tau (1 - exp(-|lam_j - lam_(j-1)| s)),

    ``c_j = min(l_j, D tau / s + 3 tau)``, averaged over the rates' posterior. A worst case: the errors
    measured against the Monte Carlo are far smaller (``tests/test_rates.py``).
    """
    pc = pieces(scenario.rate_profile, scenario.days)
    if len(pc) < 2:
        return 0.0
    lams, w = rate_nodes(scenario, p.lam)
    s = p.tau + p.c
    cap = np.minimum(pc.lengths[1:], max(p.r_unplanned, p.r_planned) * p.tau / s + 3.0 * p.tau)
    lam_pieces = lams[:, None] * pc.multipliers[None, :]
    big = lam_pieces[:, 1:] + p.mu
    with np.errstate(divide="ignore", invalid="ignore"):
        before_first = np.where(big * cap > 1e-12, -np.expm1(-big * cap) / big, cap)
    fate = p.tau * -np.expm1(-np.abs(np.diff(lam_pieces, axis=1)) * s)
    changed = pc.multipliers[1:] != pc.multipliers[:-1]
    per_node = ((before_first + fate) * changed).sum(axis=1)
    return float(per_node @ w) / pc.hours


def uncertainty_summary(
    scenario: Scenario,
    p: Params,
    unplanned_rate: np.ndarray,
    goodput: np.ndarray,
    fitted: np.ndarray | None = None,
) -> dict[str, Any]:
    """How much of the variance of interruptions and of goodput the rates' uncertainty causes, and how much
    chance does (law of total variance), with the posterior of the total rate per GPU-hour.

    Interruptions: given the rates the count is Poisson, so ``Var(E[N | rates]) = I^2 Var(rate)`` and
    ``E[Var(N | rates)] = I E[rate]`` (``I`` the profile's integral), both exact. Goodput: ``Var(E[G |
    rates])`` over the posterior with :func:`rate_nodes`, and ``E[Var(G | rates)]`` estimated from the trials
    as the mean of ``(G - E[G | the trial's rate])^2``, which :func:`conditional_goodput` gives. Where no closed
    form gives ``E[G | rate]`` (``fitted``: its estimate from the trials, for each), both parts come from the
    trials: the variance of ``fitted`` and the mean square of what is left.
    """
    posterior = RatePosterior.of(scenario.components)
    pc = pieces(scenario.rate_profile, scenario.days)
    per_gpu = float(job_rates(scenario, p.lam, 1.0))  # the job's rate per unit of rate per GPU-hour
    integral = pc.integral()
    var_rates_n = (integral * per_gpu) ** 2 * posterior.variance()
    chance_n = integral * per_gpu * posterior.mean()
    if fitted is None:
        lams, w = rate_nodes(scenario, p.lam)
        g = conditional_goodput(scenario, p, lams)
        g_mean = float(g @ w)
        var_rates_g = max(float(((g - g_mean) ** 2) @ w), 0.0)
        chance_g = float(np.mean((goodput - conditional_goodput(scenario, p, unplanned_rate)) ** 2))
    else:
        var_rates_g = float(np.var(fitted))
        chance_g = float(np.mean((goodput - fitted) ** 2))
    return {
        "rate_per_gpu_hour": {"mean": posterior.mean(), "sd": math.sqrt(posterior.variance())},
        "interruptions": _shares(var_rates_n, chance_n),
        "goodput": _shares(var_rates_g, chance_g),
    }


def _shares(rates: float, chance: float) -> dict[str, float]:
    total = rates + chance
    if total <= 0:
        return {"variance_share_rates": 0.0, "variance_share_chance": 0.0}
    return {"variance_share_rates": rates / total, "variance_share_chance": chance / total}
