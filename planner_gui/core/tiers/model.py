"""Recovery strategies: a fast in-memory tier, a persistent tier with asynchronous uploads, failure scope.

docs/tiers.md states the model in full; this module holds its inputs (:class:`Tiers`), the default
failure scope of every Llama 3 cause (:data:`DEFAULT_SCOPES`, each with its reason), the rule that says
which tier restores after a failure of each scope (:func:`restoring_tier`), and the inputs in the
engine's units (:class:`TierParams`, :func:`tier_params`).

The persistent tier is today's checkpoint: its interval is the scenario's ``checkpoint_interval_min``
and its blocking copy the scenario's write (``Scenario.write_s``), so a scenario without the fast tier,
without upload time and without restore time is exactly today's model.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Literal, get_args

from ..model import Component, Scenario

__all__ = [
    "CATEGORY_SCOPES",
    "DEFAULT_SCOPES",
    "PLACEMENTS",
    "SCOPES",
    "Placement",
    "Scope",
    "TierParams",
    "TierRates",
    "Tiers",
    "persistent_multiple",
    "restoring_tier",
    "scope_of",
    "tier_params",
    "tier_rates",
]

#: What a failure loses besides the job's processes: ``process`` (nothing: host memory survives),
#: ``node`` (one server and its memory), ``domain`` (every node of one failure domain).
Scope = Literal["process", "node", "domain"]
#: Where a node's in-memory snapshot is replicated: on peers in its own failure domain or only in others.
Placement = Literal["same-domain", "other-domain"]
SCOPES: tuple[str, ...] = get_args(Scope)
PLACEMENTS: tuple[str, ...] = get_args(Placement)
Tier = Literal["fast", "persistent"]

#: Default scope of each Llama 3 cause (arXiv 2407.21783, Table 5), with the reason. A scope says whose
#: host memory the failure takes with it, which is what decides whether an in-memory snapshot survives.
DEFAULT_SCOPES: dict[str, tuple[Scope, str]] = {
    "Faulty GPU": ("node", "The GPU's server is drained and replaced (or rebooted): its host memory goes with it."),
    "GPU HBM3 Memory": ("node", "An uncorrectable HBM error takes the GPU, and with it its server, out of the job."),
    "Software Bug": ("process", "The job crashes; every host and its memory are intact, so it restarts in place."),
    "Network Switch/Cable": (
        "domain",
        "A leaf switch cuts off every node under it (a cable only one, but Table 5 does not separate them): the "
        "case that decides where replicas must live.",
    ),
    "Host Maintenance": (
        "node",
        "Unplanned maintenance takes one host down (reboot, reimage, repair); rack-wide work is announced, i.e. "
        "planned.",
    ),
    "GPU SRAM Memory": ("node", "A GPU SRAM error needs the GPU reset or replaced: its server leaves the job."),
    "GPU System Processor": ("node", "A hung GSP needs a GPU reset or a reboot: its server leaves the job."),
    "NIC": ("node", "The node loses its back-end network: it is unreachable for the job and replaced."),
    "NCCL Watchdog Timeouts": ("process", "A collective hangs and the job is killed; the hosts are fine."),
    "Silent Data Corruption": (
        "node",
        "The corrupting GPU's server is excluded. If corruption may predate the last in-memory snapshot, "
        "restoring it is unsafe: treat such incidents as needing the persistent tier (no scope says so).",
    ),
    "GPU Thermal Interface + Sensor": ("node", "An overheating or unreadable GPU takes its server out of the job."),
    "SSD": ("node", "A failed local disk (boot, cache) takes its server down."),
    "Power Supply": ("node", "The server loses power (a redundant supply would not interrupt): its memory is gone."),
    "Server Chassis": ("node", "A chassis fault (fans, backplane) takes the whole server down."),
    "IO Expansion Board": ("node", "The PCIe board behind the GPUs and NICs fails: the server leaves the job."),
    "Dependency": ("process", "An outside service the job needs (storage, scheduler) fails; the hosts are fine."),
    "CPU": ("node", "A host CPU fault takes the server down."),
    "System Memory": ("node", "Host DRAM fails: that node's memory, and any snapshot in it, is lost."),
}

#: Scope of a component that :data:`DEFAULT_SCOPES` does not name, by its category (else ``node``).
CATEGORY_SCOPES: dict[str, Scope] = {
    "GPU": "node",
    "Host": "node",
    "Network": "domain",
    "Unplanned Maintenance": "node",
    "Dependency": "process",
    "Unknown": "process",
}


@dataclass(frozen=True)
class Tiers:
    """The recovery strategy: inputs beyond today's single persistent checkpoint.

    The persistent tier's interval and blocking copy are the scenario's ``checkpoint_interval_min`` and
    write (``Scenario.write_s``); everything else is here. Times are in the unit their names say.
    """

    #: The in-memory tier is on: snapshots in host memory, replicated to ``fast_replicas`` peer nodes.
    fast_enabled: bool = False
    #: Compute between fast snapshots, minutes ("optimal": :func:`.optimal.optimal_tier_intervals`).
    fast_interval_min: float | str = "optimal"
    #: Training stall per fast snapshot (GPU to host memory), seconds.
    fast_stall_s: float = 5.0
    #: Time to restore from the fast tier after detection and restart, seconds.
    fast_restore_s: float = 10.0
    #: Peer nodes holding a copy of each node's snapshot (0: only its own host memory).
    fast_replicas: int = 1
    #: Whether those peers may share the node's failure domain.
    fast_placement: Placement = "same-domain"
    #: Nodes per failure domain (a rack, a leaf switch, a power feed). With 1, a domain is a node.
    nodes_per_domain: int = 4
    #: Wall-clock time of a background upload of a snapshot to persistent storage, seconds.
    persistent_upload_s: float = 0.0
    #: Time to restore from the persistent tier after detection and restart, seconds.
    persistent_restore_s: float = 0.0
    #: Per-component scopes that override the defaults: (component name, scope) pairs.
    scopes: tuple[tuple[str, Scope], ...] = field(default=())

    def validate(self) -> None:
        """Raise ValueError naming the first input out of range."""
        for name in ("fast_stall_s", "fast_restore_s", "persistent_upload_s", "persistent_restore_s"):
            value = getattr(self, name)
            if not (math.isfinite(value) and value >= 0):
                raise ValueError(f"{name} must be a finite number >= 0 (got {value!r})")
        if not isinstance(self.fast_interval_min, str):
            if not (math.isfinite(self.fast_interval_min) and self.fast_interval_min > 0):
                raise ValueError(f"fast_interval_min must be > 0 or 'optimal' (got {self.fast_interval_min!r})")
        elif self.fast_interval_min != "optimal":
            raise ValueError(f"fast_interval_min must be > 0 or 'optimal' (got {self.fast_interval_min!r})")
        if self.fast_replicas < 0:
            raise ValueError(f"fast_replicas must be >= 0 (got {self.fast_replicas!r})")
        if self.nodes_per_domain < 1:
            raise ValueError(f"nodes_per_domain must be >= 1 (got {self.nodes_per_domain!r})")
        if self.fast_placement not in PLACEMENTS:
            raise ValueError(f"fast_placement must be one of {PLACEMENTS} (got {self.fast_placement!r})")
        if self.fast_placement == "same-domain" and self.fast_replicas > self.nodes_per_domain - 1 > 0:
            raise ValueError(
                f"{self.fast_replicas} replicas do not fit in the other {self.nodes_per_domain - 1} nodes of a domain"
            )
        for name, scope in self.scopes:
            if scope not in SCOPES:
                raise ValueError(f"the scope of {name!r} must be one of {SCOPES} (got {scope!r})")


def scope_of(component: Component, tiers: Tiers) -> Scope:
    """A component's failure scope: the scenario's override, else its default by name, else by category."""
    for name, scope in tiers.scopes:
        if name == component.name:
            return scope
    if component.name in DEFAULT_SCOPES:
        return DEFAULT_SCOPES[component.name][0]
    return CATEGORY_SCOPES.get(component.category, "node")


def restoring_tier(scope: Scope, tiers: Tiers) -> Tier:
    """The tier a failure of ``scope`` restores from, before any other failure interferes.

    The job restores from the fast tier when every lost node's snapshot has a replica on a surviving node:

    * ``process``: no node is lost, so the fast tier whenever it is on;
    * ``node``: the fast tier if at least one replica lives on another node;
    * ``domain``: the fast tier only if replicas never share a domain (``other-domain``), or a domain is a
      single node; with ``same-domain`` placement every replica of some lost node is lost with it.

    Otherwise (and always with the fast tier off) the persistent tier.
    """
    if not tiers.fast_enabled:
        return "persistent"
    if scope == "process":
        return "fast"
    if tiers.fast_replicas < 1:
        return "persistent"
    if scope == "node":
        return "fast"
    if tiers.fast_placement == "other-domain" or tiers.nodes_per_domain == 1:
        return "fast"
    return "persistent"


@dataclass(frozen=True)
class TierRates:
    """The unplanned rate split by the tier that restores (per hour, whole job), and which components go where."""

    fast: float
    persistent: float
    fast_components: tuple[bool, ...]  # per scenario component: restores from the fast tier


def tier_rates(scenario: Scenario, tiers: Tiers) -> TierRates:
    """Split the scenario's unplanned interruptions into the two Poisson streams by each component's scope."""
    flags = tuple(restoring_tier(scope_of(c, tiers), tiers) == "fast" for c in scenario.components)
    fast = math.fsum(c.rate_per_gpu_hour for c, f in zip(scenario.components, flags) if f) * scenario.gpus
    slow = math.fsum(c.rate_per_gpu_hour for c, f in zip(scenario.components, flags) if not f) * scenario.gpus
    return TierRates(fast, slow, flags)


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

    def __post_init__(self) -> None:
        if self.k < 1 or self.tau <= 0 or self.c < 0 or self.upload < 0:
            raise ValueError(f"bad tier parameters: {self}")

    @property
    def s(self) -> float:
        """One snapshot cycle: compute and stall."""
        return self.tau + self.c

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
        return max(1, math.ceil(self.upload / (self.k * self.s) * (1.0 - 1e-12)))


def tier_params(
    scenario: Scenario, tiers: Tiers, fast_interval_min: float, persistent_interval_min: float
) -> TierParams:
    """The scenario and strategy in hours, for the intervals given (minutes; resolve "optimal" first).

    With the fast tier on, the persistent interval is rounded to a whole number ``k`` of fast intervals
    and the persistent tier's blocking copy is not used: a persistent checkpoint uploads a fast snapshot
    that is already in host memory (docs/tiers.md says why).
    """
    tiers.validate()
    rates = tier_rates(scenario, tiers)
    detect_restart = (scenario.detect_min + scenario.restart_min) / 60.0
    common = {
        "mu": scenario.planned_per_day / 24.0,
        "hours": scenario.hours,
        "upload": tiers.persistent_upload_s / 3600.0,
        "r_persistent": detect_restart + tiers.persistent_restore_s / 3600.0,
        "r_planned": scenario.restart_min / 60.0,
    }
    if not tiers.fast_enabled:
        return TierParams(
            lam_fast=0.0,
            lam_persistent=rates.fast + rates.persistent,
            tau=persistent_interval_min / 60.0,
            c=scenario.write_s / 3600.0,
            k=1,
            r_fast=common["r_persistent"],
            **common,
        )
    return TierParams(
        lam_fast=rates.fast,
        lam_persistent=rates.persistent,
        tau=fast_interval_min / 60.0,
        c=tiers.fast_stall_s / 3600.0,
        k=persistent_multiple(persistent_interval_min, fast_interval_min),
        r_fast=detect_restart + tiers.fast_restore_s / 3600.0,
        **common,
    )
