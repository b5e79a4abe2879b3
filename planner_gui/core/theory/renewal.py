"""Renewal theory for node lives (docs/model.md, "Node lives"): the renewal function of Weibull lives, and the
scenario as the optimal intervals see it on a new cluster."""

from __future__ import annotations

import dataclasses
import functools
import math

import numpy as np

from ..model.scenario import Scenario
from ..util import special

__all__ = ["unit_renewals", "weibull_renewal_function", "window_rates"]

#: Grid steps of the renewal function (the scheme is O(n^2): about 30 ms).
_RENEWAL_STEPS = 4000
#: Grid steps within one life for a wear-out shape (above 1).
WEAR_OUT_STEPS_PER_LIFE = 64.0


def weibull_renewal_function(shape: float, life: float, t: np.ndarray) -> np.ndarray:
    """The renewal function ``M(t)`` (expected renewals in ``[0, t]``) of Weibull(``shape``, ``life``) lives.

    Solves ``M(t) = F(t) + int_0^t F(t - s) dM(s)`` by the Riemann-Stieltjes scheme (Xie 1989): with ``dM``
    on each grid step and ``F`` at the step's midpoint, each ``M_n`` is one linear equation. The grid is
    uniform in ``t^shape`` (dense near 0, where ``F`` is steep) and its steps stay within ``life / 8``: a
    step much longer than a life makes ``F`` at its midpoint nearly 1 and the equation's divisor nearly 0,
    which magnifies every error (lives of minutes in a run of weeks gave multipliers rising to x30).

    A wear-out shape (above 1) has ``F`` flat near 0 and steep about the life instead: its grid is even, 64 steps a
    life, for 62 lives, past which the renewal density's waves about ``1 / mean`` have died down and ``M`` goes on
    at that slope (checked against simulated renewals for shapes 2.5 to 10 in ``tests/test_node_lives.py``).

    For shapes up to 1, past the grid's end ``t0`` (``shape * steps / 8`` lives) the renewal density has nearly reached
    ``1 / mean``; what is left of its excess is carried on by the renewal theorem's tail: ``M(t) = t / mean
    + c - a B(t)`` with ``c = E[X^2] / (2 mean^2) - 1`` the limit of ``M(t) - t / mean``, ``B(t) =
    int_t^inf (x - t) (1 - F(x)) dx`` the shape of the excess of a subexponential life (the asymptotic
    ``u(t) - 1/mean ~ int_t^inf (1 - F) / mean^2``), and ``a`` set so that ``M`` is continuous at ``t0``.
    """
    t = np.asarray(t, dtype=float)
    top = float(t.max()) if t.size else 0.0
    if top <= 0:
        return np.zeros_like(t)
    if shape <= 1.0:
        end = min(top, shape * _RENEWAL_STEPS * life / 8.0)
        grid = end * np.linspace(0.0, 1.0, _RENEWAL_STEPS + 1) ** (1.0 / shape)
    else:  # wear-out: F is flat near 0 and steep about the life; even steps of at most 1/64 of it
        end = min(top, _RENEWAL_STEPS * life / WEAR_OUT_STEPS_PER_LIFE)
        grid = np.linspace(0.0, end, _RENEWAL_STEPS + 1)

    def cdf(x: np.ndarray) -> np.ndarray:
        out: np.ndarray = -np.expm1(-((np.maximum(x, 0.0) / life) ** shape))
        return out

    mid = (grid[1:] + grid[:-1]) / 2.0
    m = np.zeros(len(grid))
    dm = np.zeros(len(grid) - 1)
    f_grid = cdf(grid)
    for n in range(1, len(grid)):
        # M_n = F_n + sum_{i<n} F(t_n - mid_i) dM_i + F(t_n - mid_n) (M_n - M_{n-1})
        past = float(cdf(grid[n] - mid[: n - 1]) @ dm[: n - 1]) if n > 1 else 0.0
        last = float(cdf(grid[n] - mid[n - 1 : n])[0])
        m[n] = (f_grid[n] + past - last * m[n - 1]) / (1.0 - last)
        dm[n - 1] = m[n] - m[n - 1]
    out: np.ndarray = np.interp(t, grid, m)
    beyond = t > end
    if np.any(beyond) and shape > 1.0:
        # (62 lives on: the renewal density's waves about 1 / mean have died down; it goes on at 1 / mean)
        out[beyond] = m[-1] + (t[beyond] - end) / (life * float(special.gamma(1.0 + 1.0 / shape)))
    elif np.any(beyond):
        mean = life * float(special.gamma(1.0 + 1.0 / shape))
        limit = float(special.gamma(1.0 + 2.0 / shape)) / (2.0 * float(special.gamma(1.0 + 1.0 / shape)) ** 2) - 1.0

        def tail(x: np.ndarray) -> np.ndarray:  # B(x) = int_x^inf (y - x) (1 - F(y)) dy
            z = (x / life) ** shape
            first = life**2 / shape * special.gamma(2.0 / shape) * special.gammaincc(2.0 / shape, z)
            out_: np.ndarray = first - x * life / shape * special.gamma(1.0 / shape) * special.gammaincc(1.0 / shape, z)
            clipped: np.ndarray = np.maximum(out_, 0.0)
            return clipped

        b_end = float(tail(np.array([end]))[0])
        gap = end / mean + limit - m[-1]
        amp = max(gap, 0.0) / b_end if b_end > 0 else 0.0
        x = t[beyond]
        out[beyond] = m[-1] + (x - end) / mean + amp * (b_end - tail(x))
    return out


@functools.lru_cache(maxsize=64)
def unit_renewals(shape: float, u: tuple[float, ...]) -> tuple[float, ...]:
    """The renewal function of unit-scale Weibull lives of ``shape`` at ``u`` (:func:`.profiles.expected_to` asks
    for the same ones again for every view of one scenario)."""
    return tuple(float(v) for v in weibull_renewal_function(shape, 1.0, np.array(u)))


def window_rates(scenario: Scenario) -> Scenario:
    """The scenario as the optimal intervals see it (docs/model.md 3, "Node lives"): on a new cluster with node lives
    that are not exponential, each such component at its mean rate over the window (its expected failures over the
    window's GPU-hours, at the base rates: no profile, no uncertainty, as every optimum takes them) and its life
    exponential; with bad nodes (docs/model.md, "Bad nodes"), each class a bad node fails by more often at its mean
    rate over the window, their extra failures included (:func:`.bad_nodes.bad_expected`, at the base rates too), and
    no node bad; else the scenario itself."""
    if scenario.uses_bad:
        scenario = _without_bad(scenario)
    if not (scenario.new_cluster and scenario.uses_weibull):
        return scenario
    n, exposure = scenario.job_nodes, scenario.gpus * scenario.hours
    comps = []
    for c in scenario.components:
        shape, scale = scenario.weibull_shape_of(c), scenario.weibull_scale_hours(c)
        if shape != 1.0 and math.isfinite(scale) and exposure > 0:
            count = n * unit_renewals(shape, (scenario.hours / scale,))[0]
            c = dataclasses.replace(c, rate_per_gpu_hour=count / exposure)
        comps.append(c)
    return scenario.replace(components=tuple(comps), weibull=())


def _without_bad(scenario: Scenario) -> Scenario:
    """The scenario with each class a bad node fails by more often at its mean rate over the window and no bad node."""
    from .bad_nodes import bad_expected, bad_rates

    per = bad_rates(scenario)[: len(scenario.components)]  # (the correlated class is never a node's)
    lam, exposure = float(per.sum()), scenario.gpus * scenario.hours
    if lam <= 0 or exposure <= 0:
        return scenario.replace(bad_share=0.0)
    extra = float(bad_expected(scenario, lam, np.array([scenario.hours])).extra[0])
    comps = tuple(
        dataclasses.replace(c, rate_per_gpu_hour=c.rate_per_gpu_hour + extra * per[j] / lam / exposure)
        if per[j] > 0
        else c
        for j, c in enumerate(scenario.components)
    )
    return scenario.replace(components=comps, bad_share=0.0)
