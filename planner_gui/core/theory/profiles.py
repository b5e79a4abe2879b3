"""Rates that change over the run: a profile of piecewise-constant multipliers of the unplanned rates.

A profile is a tuple of ``(day, multiplier)`` pairs (:data:`.scenario.Profile`), days counted from the
window's start, the first at day 0: each multiplier scales every component's unplanned rate from its day
until the next pair's, the last one for ever after. Planned interruptions keep their rate. Before the
window the job is in the steady state of the first piece's rate.

Profiles come from a table of days and multipliers, from a new cluster's burn-in
(:func:`burn_in_profile`) or from the power law an incident log's fit finds (:func:`power_law_profile`;
:func:`.incidents.profile_from_fit` takes a fit's).

Burn-in
-------
Each node's time to failure is Weibull with shape ``k < 1`` and characteristic life ``eta``: its hazard
``(k / eta) (t / eta)^(k - 1)`` falls with age. A failed node is replaced by a new one, so each node
position is a renewal process, and the cluster's expected failure rate at time ``t`` is the number of
positions times the renewal density ``u(t) = dM/dt``, where the renewal function ``M`` solves
``M(t) = F(t) + int_0^t F(t - s) dM(s)`` (``F`` the Weibull distribution function). As ``t`` grows, ``u``
falls to ``1 / mean``, ``mean = eta Gamma(1 + 1/k)``: the rate of a cluster whose burn-in is over, which the
scenario's rates are taken to be. So the multiplier is ``mean u(t)``, and a piece ``[a, b)`` gets its
average, ``mean (M(b) - M(a)) / (b - a)``, exact for any piece (the number of failures it expects is
right). ``M`` is computed by the Riemann-Stieltjes scheme of Xie (1989) on a grid of steps within a
life, carried on past it by the renewal theorem (:func:`weibull_renewal_function`); multipliers are within
1e-3 (checked against simulated renewals and the long-run limit in ``tests/test_rates.py``). A shape of 1 is
no burn-in. With lives of minutes the profile is x1.00 after the first hours.

The hazard of new nodes is unbounded at age 0, so the first piece's multiplier is an average over its
width (1/1000 of the window) and grows as the window shortens: it says how many interruptions that piece
holds, not a rate at any instant.
(The hazard of the original nodes alone, without replacements, would fall to 0 and has no such limit.)
"""

from __future__ import annotations

import math

import numpy as np

from ..model.scenario import Profile, Scenario
from ..util import special
from .bad_nodes import BadExpectation, bad_expected, bad_rates
from .rates import RatePosterior, gamma_rule, mean_job_rate
from .renewal import unit_renewals, weibull_renewal_function, window_rates

__all__ = [
    "BURN_IN_PIECES",
    "Pieces",
    "bad_window",
    "burn_in_profile",
    "expected_by_component",
    "expected_per_day",
    "expected_to",
    "geometric_edges",
    "is_flat",
    "mean_multiplier",
    "multiplier_after",
    "pieces",
    "power_law_profile",
    "weibull_renewal_function",
    "window_rates",
]

#: Pieces of a generated profile (burn-in, power law): geometric in time, from 1/1000 of the window.
BURN_IN_PIECES = 24


class Pieces:
    """The pieces of a profile that overlap a window of ``hours``: their starts and lengths (hours) and
    multipliers, in order (a flat window is one piece of multiplier 1)."""

    def __init__(self, starts: np.ndarray, lengths: np.ndarray, multipliers: np.ndarray) -> None:
        self.starts, self.lengths, self.multipliers = starts, lengths, multipliers

    def __len__(self) -> int:
        return len(self.lengths)

    @property
    def hours(self) -> float:
        return float(self.starts[-1] + self.lengths[-1])

    def integral(self) -> float:
        """``int m(t) dt`` over the window, hours: the expected interruptions per unit of the base rate."""
        return math.fsum(self.lengths * self.multipliers)


def pieces(profile: Profile | None, days: float) -> Pieces:
    """The pieces of ``profile`` within a window of ``days`` (None: one piece of multiplier 1)."""
    hours = days * 24.0
    if profile is None:
        return Pieces(np.zeros(1), np.array([hours]), np.ones(1))
    starts = np.array([d for d, _ in profile], dtype=float) * 24.0
    mults = np.array([m for _, m in profile], dtype=float)
    inside = starts < hours
    inside[0] = True  # validation puts the first piece at day 0
    starts, mults = starts[inside], mults[inside]
    ends = np.append(starts[1:], hours)
    return Pieces(starts, ends - starts, mults)


def is_flat(profile: Profile | None, days: float) -> bool:
    """Whether the profile changes nothing in a window of ``days``: absent, or every multiplier in it 1
    (and after it, where the steady state after the window is drawn)."""
    if profile is None:
        return True
    p = pieces(profile, days)
    return bool(np.all(p.multipliers == 1.0)) and multiplier_after(profile, days) == 1.0


def multiplier_after(profile: Profile | None, days: float) -> float:
    """The multiplier in force at the window's end (and after it)."""
    if profile is None:
        return 1.0
    current = profile[0][1]
    for day, m in profile:
        if day <= days:
            current = m
    return float(current)


def mean_multiplier(profile: Profile | None, days: float) -> float:
    """The window's average multiplier (expected interruptions relative to constant rates)."""
    p = pieces(profile, days)
    return p.integral() / p.hours


def expected_by_component(scenario: Scenario) -> np.ndarray:
    """Each component's expected unplanned interruptions over the window: its rate (the posterior mean
    when rate uncertainty is on) x GPUs x the profile's integral over the window (hours with no profile);
    on a new cluster, a component of Weibull node lives the expected renewals of its positions
    (:func:`expected_to`). They add up to the run's exact expectation. The correlated events, when on, are
    the last entry (:attr:`.scenario.Scenario.failure_components`)."""
    out: np.ndarray = expected_to(scenario, np.array([scenario.hours]))[:, 0]
    return out


def expected_to(scenario: Scenario, hours: np.ndarray) -> np.ndarray:
    """Per failure class (:attr:`.scenario.Scenario.failure_components`) and per time in ``hours`` (within the
    window), the expected unplanned interruptions from the window's start to it.

    A class at a rate ``x`` per GPU-hour expects ``x G H(t)``, ``H`` the profile's integral (its posterior mean
    with rate uncertainty). On a new cluster, a component of Weibull node lives (docs/model.md, "Node lives")
    expects ``N M(H(t) / eta)`` instead: its ``N`` positions' renewals, ``M`` the renewal function of unit-scale
    lives of its shape (:func:`weibull_renewal_function`), ``eta`` its scale on the profile's clock; with rate
    uncertainty averaged over its rate's posterior by the Gamma rule of :mod:`.rates`. A cluster that is not
    new has its positions in their steady state, whose renewals come at the long-run rate, ``x G H(t)``. Bad nodes
    add their extra failures (:func:`.bad_nodes.bad_expected`: exact with an unlimited pool; with rate
    uncertainty, at the rates' posterior mean)."""
    comps = scenario.failure_components
    post = RatePosterior.of(comps)
    if scenario.rate_uncertainty:
        rates = post.fixed + post.shapes * post.scales
    else:
        rates = np.array([c.rate_per_gpu_hour for c in comps], dtype=float)
    p = pieces(scenario.rate_profile, scenario.days)
    cum = np.concatenate(([0.0], np.cumsum(p.lengths * p.multipliers)))
    bounds = np.append(p.starts, p.hours)
    h = np.interp(np.asarray(hours, dtype=float), bounds, cum)  # int_0^t m: piecewise linear between the bounds
    out: np.ndarray = rates[:, None] * scenario.gpus * h[None, :]
    if scenario.uses_bad:  # bad nodes' extra failures (docs/model.md, "Bad nodes"), shared by the classes' rates
        per = bad_rates(scenario, rates)
        lam = float(per.sum())
        if lam > 0:
            out = out + (per / lam)[:, None] * bad_expected(scenario, lam, h).extra[None, :]
    if not (scenario.new_cluster and scenario.uses_weibull):
        return out
    n = scenario.job_nodes
    for j, c in enumerate(scenario.components):
        shape = scenario.weibull_shape_of(c)
        if shape == 1.0 or rates[j] <= 0:
            continue
        if scenario.rate_uncertainty and post.shapes[j] > 0 and post.scales[j] > 0:
            y, w = gamma_rule(float(post.shapes[j]))
            x = post.fixed[j] + post.scales[j] * y
        else:
            x, w = np.array([c.rate_per_gpu_hour]), np.ones(1)
        eta = n / (x * scenario.gpus * float(special.gamma(1.0 + 1.0 / shape)))  # the scale at each rate
        u = h[None, :] / eta[:, None]
        renewals = np.array(unit_renewals(shape, tuple(u.ravel()))).reshape(u.shape)
        out[j] = n * (w @ renewals)
    return out


def expected_per_day(scenario: Scenario, rate_per_hour: float | None = None) -> np.ndarray:
    """Expected unplanned interruptions in each day of the window (the last day may be partial).

    ``rate_per_hour`` is the job's base rate (default: the scenario's, times the posterior mean's ratio to
    it when rate uncertainty is on); the profile multiplies it, and on a new cluster node lives that are not
    exponential shape it (:func:`expected_to`; another rate scales that curve). The days add up to the run's
    expectation.
    """
    edges = np.append(np.arange(0.0, scenario.hours, 24.0), scenario.hours)
    mean = mean_job_rate(scenario)
    out: np.ndarray = np.diff(expected_to(scenario, edges).sum(axis=0))
    if rate_per_hour is not None:
        out = out * (rate_per_hour / mean if mean > 0 else 0.0)
    return out


# -- generated profiles ------------------------------------------------------------------------------


def geometric_edges(days: float, count: int = BURN_IN_PIECES, start_day: float = 0.0) -> np.ndarray:
    """``count + 1`` piece edges from 0 to ``days``: 0, then geometric from ``days / 1000``."""
    inner = np.geomspace(days / 1000.0, days, count)
    return np.concatenate(([0.0], inner[:-1], [days])) + start_day


def burn_in_profile(shape: float, life_days: float, days: float, count: int = BURN_IN_PIECES) -> Profile:
    """The profile of a new cluster's burn-in over a window of ``days`` (see the module docstring).

    Parameters
    ----------
    shape
        Weibull shape of a node's time to failure, in (0, 1] (1: no burn-in, one piece of multiplier 1).
    life_days
        Its characteristic life, days.
    days
        The window; ``count`` pieces with geometric edges (:func:`geometric_edges`) cover it.
    """
    if not (0.0 < shape <= 1.0 and life_days > 0 and days > 0):
        raise ValueError("burn-in: the shape must be in (0, 1] and the life and the window positive")
    if shape == 1.0:
        return ((0.0, 1.0),)
    edges = geometric_edges(days, count)
    mean = life_days * float(special.gamma(1.0 + 1.0 / shape))
    renewals = weibull_renewal_function(shape, life_days, edges)
    mults = mean * np.diff(renewals) / np.diff(edges)
    return tuple((float(d), float(m)) for d, m in zip(edges[:-1], mults))


def power_law_profile(
    shape: float, log_hours: float, days: float, start_day: float = 0.0, count: int = BURN_IN_PIECES
) -> Profile:
    """The profile of a power-law process fitted to an incident log, over a window of ``days``.

    The fit's rates are the log's averages, ``n / W`` over its ``log_hours = W``; the power law's rate is
    ``shape (t / W)^(shape - 1)`` times that average at ``t`` hours after the log's start. The window starts
    ``start_day`` days after the log's start; each piece gets the exact average of the multiplier over it.
    """
    if not (shape > 0 and log_hours > 0 and days > 0 and start_day >= 0):
        raise ValueError("power law: the shape, the log's window and the run's must be positive")
    edges = geometric_edges(days, count) + start_day
    cum = (edges * 24.0 / log_hours) ** shape * log_hours  # int_0^t of the multiplier, hours
    mults = np.diff(cum) / (np.diff(edges) * 24.0)
    return tuple((float(d - start_day), float(m)) for d, m in zip(edges[:-1], mults))


def bad_window(scenario: Scenario) -> BadExpectation:
    """Bad nodes' expectations (:func:`.bad_nodes.bad_expected`) at the window's end, on the profile's clock over the
    window, at the components' rates as given."""
    lam = float(bad_rates(scenario).sum())
    p = pieces(scenario.rate_profile, scenario.days)
    return bad_expected(scenario, lam, np.array([float(np.sum(p.lengths * p.multipliers))]))
