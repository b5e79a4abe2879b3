"""Recovery strategies: a fast in-memory tier, a persistent tier with asynchronous uploads, failure scope.

docs/tiers.md states the model in full; this module holds its inputs (:class:`Tiers`), the default
failure scope of every Llama 3 cause (:data:`DEFAULT_SCOPES`, each with its reason), the rule that says
which tier restores after a failure of each scope (:func:`restoring_tier`), and the inputs in the
engine's units (:class:`TierParams`, :func:`..theory.tiers.tier_params`).

The persistent tier is today's checkpoint: its interval is the scenario's ``checkpoint_interval_min``
and its blocking copy the scenario's write (``Scenario.write_s``), so a scenario without the fast tier,
without upload time and without restore time is exactly today's model.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import numpy as np

from .scenario import CORRELATED_SCOPE, PLACEMENTS, SCOPES, ClassScope, Placement, Scenario, Scope, Tiers
from .scopes import CATEGORY_SCOPES, DEFAULT_SCOPES, class_scopes, scope_of

__all__ = [
    "CATEGORY_SCOPES",
    "DEFAULT_SCOPES",
    "PLACEMENTS",
    "SCOPES",
    "Placement",
    "Scope",
    "TierHours",
    "TierParams",
    "Tiers",
    "class_scopes",
    "persistent_multiple",
    "point_stall_h",
    "restore_caveat",
    "restoring_tier",
    "scope_of",
]

Tier = Literal["fast", "persistent"]


def restoring_tier(scope: ClassScope, tiers: Tiers) -> Tier:
    """The tier a failure of ``scope`` restores from, before any other failure interferes.

    The job restores from the fast tier when every lost node's snapshot has a replica on a surviving node:

    * ``process``: no node is lost, so the fast tier whenever it is on;
    * ``node``: the fast tier if at least one replica lives on another node;
    * ``correlated`` (several domains at once, docs/model.md "Correlated failures"): never the fast tier;
    * ``domain``: the fast tier only if replicas never share a domain (``other-domain``); with
      ``same-domain`` placement every replica of some lost node is lost with it (a domain of one node has no
      room for a replica in it: :meth:`.scenario.Tiers.validate` refuses that placement).

    Otherwise (and always with the fast tier off) the persistent tier.
    """
    if not tiers.fast_enabled:
        return "persistent"
    if scope == CORRELATED_SCOPE:  # (several domains at once: their peers' replicas may be among them)
        return "persistent"
    if scope == "process":
        return "fast"
    if tiers.fast_replicas < 1:
        return "persistent"
    if scope == "node":
        return "fast"
    if tiers.fast_placement == "other-domain":
        return "fast"
    return "persistent"


def restore_caveat(scenario: Scenario, tiers: Tiers) -> str | None:
    """A warning when a restore from memory costs more than one from storage (``None`` otherwise): a scenario
    whose restart time already holds the load from storage (today's model has no restore of its own) adds the
    fast restore on top of it, and the fast tier then only makes recovery slower."""
    if not tiers.fast_enabled or tiers.fast_restore_min <= tiers.persistent_restore_min:
        return None
    return (
        f"a restore from memory ({tiers.fast_restore_min:g} min) takes longer than one from storage "
        f"({tiers.persistent_restore_min:g} min); if the restart time ({scenario.restart_at_size_min:.3g} min) already "
        "includes loading the checkpoint from storage, move that part to the persistent restore (as "
        "h100-100k-inmemory does), or every restore from memory costs more than it saves"
    )


def persistent_multiple(persistent_min: float, fast_min: float) -> int:
    """``k``: the persistent interval as a whole number of fast intervals (the nearest, at least 1)."""
    return max(1, round(persistent_min / fast_min))


@dataclass(frozen=True)
class TierParams:
    """Rates per hour and times in hours: what :mod:`.engine` and :mod:`.exact` consume.

    With the fast tier off, ``tau`` and ``c`` are the persistent interval and blocking copy, ``k`` is 1,
    ``lam_fast`` is 0 and every unplanned interruption restores from the persistent tier.
    """

    lam_fast: float  # unplanned interruptions per hour that restore from the fast tier
    lam_persistent: float  # ... and from the persistent tier
    mu: float  # planned interruptions per hour
    hours: float  # window length
    tau: float  # compute between snapshots (fast, or persistent with the fast tier off)
    c: float  # stall per snapshot
    k: int  # persistent points every k snapshots
    upload: float  # wall-clock time of one upload
    r_fast: float  # detect + restart + fast restore
    r_persistent: float  # detect + restart + persistent restore
    r_planned: float  # restart
    #: With the fast tier on, the persistent tier's own blocking stall at each persistent point, on top of the
    #: fast stall (0: the points cost what any snapshot costs). Always 0 with the fast tier off.
    c_point: float = 0.0
    #: The restores alone (hours): what a planned interruption in a failure's downtime keeps (docs/model.md 2.4).
    restore_fast: float = 0.0
    restore_persistent: float = 0.0

    def __post_init__(self) -> None:
        if self.k < 1 or self.tau <= 0 or self.c < 0 or self.upload < 0 or self.c_point < 0:
            raise ValueError(f"bad tier parameters: {self}")

    @property
    def s(self) -> float:
        """One snapshot cycle: compute and stall."""
        return self.tau + self.c

    @property
    def persistent_cycle(self) -> float:
        """Wall-clock time from one persistent point to the next without interruptions: ``k s + c_point``."""
        return self.k * self.s + self.c_point

    @property
    def nu(self) -> float:
        """Rate of full renewals: persistent restores and planned interruptions."""
        return self.lam_persistent + self.mu

    @property
    def big(self) -> float:
        """Rate of all interruptions."""
        return self.lam_fast + self.lam_persistent + self.mu

    @property
    def skip(self) -> int:
        """``q``: uploads start at every q-th persistent point passed without a failure (one at a time)."""
        if self.upload == 0:
            return 1
        # An upload that ends exactly as the next point is passed frees the uploader for it.
        return max(1, math.ceil(self.upload / self.persistent_cycle * (1.0 - 1e-12)))


@dataclass
class TierHours:
    """Per-trial hours and counts of a run of the two-tier model (:func:`..sim.tiers.simulate_tier_params`; no split
    among components)."""

    useful: np.ndarray
    checkpoint: np.ndarray
    lost: np.ndarray
    recovery: np.ndarray
    planned: np.ndarray
    n_fast: np.ndarray  # fast-tier failures in the window
    n_persistent: np.ndarray  # persistent-tier failures
    n_planned: np.ndarray
    promoted: np.ndarray  # fast-tier failures during a persistent restore: they restored from the persistent tier

    @classmethod
    def zeros(cls, trials: int) -> TierHours:
        f = [np.zeros(trials) for _ in range(5)]
        i = [np.zeros(trials, dtype=np.int64) for _ in range(4)]
        return cls(*f, *i)


def point_stall_h(scenario: Scenario, tiers: Tiers) -> float:
    """The persistent tier's own stall at each persistent point, on top of the fast stall (hours): the scenario's
    write with the fast tier on, else 0 (the write is then the persistent checkpoint's whole stall). Above 0, a
    run goes to the general engine (:mod:`planner_gui.core.sim`)."""
    return scenario.write_s / 3600.0 if tiers.fast_enabled else 0.0
