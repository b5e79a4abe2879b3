"""Rates that vary, as the engine draws them: between trials (rate uncertainty) and over the window (a
rate profile).

With rate uncertainty each trial first draws its components' rates (:meth:`.rates.RatePosterior.draw`,
its own random stream, so no other draw moves); the trial's unplanned rate is their total, and its
interruptions are split among the components in proportion to that trial's rates. With a profile, a
trial's rows are the profile's pieces (each cut further when it holds many interruptions), and a row's
unplanned mean is the trial's rate x the piece's multiplier x the row's hours. Planned interruptions
keep their rate. Before the window the job is in the steady state of the first piece's rate, and the
first interruption after it comes at the rate in force at the window's end.

When neither applies (uncertainty off or no component with evidence, and a flat profile) the engine
runs exactly as for constant rates: the same draws, the same numbers. A profile with one piece in the
window (and after it) is a constant rate, and runs so.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from ..model.scenario import Scenario
from ..theory.params import Params
from ..theory.profiles import Pieces, is_flat, multiplier_after, pieces
from ..theory.rates import RatePosterior, job_rates

__all__ = ["RowPieces", "VaryingRates", "row_pieces", "varying_rates"]


@dataclass(frozen=True)
class VaryingRates:
    """What the engine needs beyond constant rates.

    ``trial_lam`` is each trial's unplanned rate per hour before the profile (None: ``lam`` for every
    trial), ``comp_rates`` its components' rates per GPU-hour (None: the scenario's), ``pieces`` the
    profile's pieces in the window and ``after`` the multiplier in force after it.
    """

    trial_lam: np.ndarray | None
    comp_rates: np.ndarray | None
    pieces: Pieces
    after: float

    def lams(self, lam: float, trials: int) -> np.ndarray:
        """Each trial's unplanned rate per hour, before the profile."""
        return np.full(trials, lam) if self.trial_lam is None else self.trial_lam


def varying_rates(scenario: Scenario, params: Params) -> tuple[Params, VaryingRates | None]:
    """The rates of ``scenario`` as the engine draws them: ``params`` (its ``lam`` scaled by a one-piece
    profile's multiplier), and what varies (None: nothing, the constant-rate engine applies)."""
    profile, days = scenario.rate_profile, scenario.days
    comp_rates = trial_lam = None
    if scenario.rate_uncertainty:
        posterior = RatePosterior.of(scenario.components)
        if posterior.uncertain.any():
            comp_rates = posterior.draw(scenario.seed, scenario.trials)
            trial_lam = job_rates(scenario, params.lam, comp_rates.sum(axis=1))
    if trial_lam is None:
        if is_flat(profile, days):
            return params, None
        p = pieces(profile, days)
        if len(p) == 1 and multiplier_after(profile, days) == p.multipliers[0]:
            return dataclasses.replace(params, lam=params.lam * float(p.multipliers[0])), None
    return params, VaryingRates(trial_lam, comp_rates, pieces(profile, days), multiplier_after(profile, days))


@dataclass(frozen=True)
class RowPieces:
    """The rows of one trial: each one's hours and multiplier (the same for every trial)."""

    hours: np.ndarray
    multipliers: np.ndarray

    def __len__(self) -> int:
        return len(self.hours)


def row_pieces(p: Pieces, splits: tuple[int, ...]) -> RowPieces:
    """Each piece cut into ``splits`` equal rows."""
    counts = np.asarray(splits)
    return RowPieces(np.repeat(p.lengths / counts, counts), np.repeat(p.multipliers, counts))
