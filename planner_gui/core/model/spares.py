"""Spares, repairs and fault-tolerant continuation: the inputs (:class:`Spares`) and the model in hours.

docs/spares.md states the model in full. In short:

* every unplanned interruption of a component with ``node`` scope takes one node away, one with ``domain``
  scope ``nodes_per_domain`` nodes, one with ``process`` scope none (the node rejoins at restart);
* a node taken away is in repair for a time of mean ``repair_hours`` of the component's category
  (exponential, or lognormal with ``repair_sigma``), then goes back to the pool of spares;
* the job needs ``N = gpus / gpus_per_node`` nodes and owns ``spare_nodes`` more; while more nodes are in
  repair than there are spares, the job cannot run at full size: it waits (``waiting_for_spares``) or, with
  ``min_gpus`` set, runs smaller at proportionally lower throughput (``reduced_throughput``);
* in ``continue`` mode the job is data-parallel replicas of ``replica_gpus`` GPUs: a failure inside one
  replica stalls the job for ``continue_stall_min`` and takes that replica's share of throughput away until
  it is back, losing no work; failures of process scope or spanning more than ``max_replicas_lost``
  replicas still restart from a checkpoint.

The failure streams do not depend on what the job is doing (as in today's model, where interruptions arrive
whatever the job does), so the nodes in repair follow the M/G/infinity law whatever the spares and the mode.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np

from .scenario import CORRELATED_SCOPE, RECOVERY_MODES, Component, Scenario, Spares, Tiers

__all__ = [
    "DEFAULT_REPAIR_HOURS",
    "RECOVERY_MODES",
    "FailureClasses",
    "Spares",
    "SparesParams",
    "component_scope",
    "correlated_caveats",
    "correlated_nodes",
    "correlated_nodes_text",
    "correlated_then",
    "failure_classes",
    "node_categories",
    "nodes_per_domain_of",
    "repair_hours_of",
    "restart_scenario",
    "spare_racks",
    "spares_params",
]

#: Default mean repair time of a lost node by category (hours), with the reason. ``process``-scope
#: failures take no node, whatever their category's figure.
DEFAULT_REPAIR_HOURS: dict[str, tuple[float, str]] = {
    "GPU": (
        48.0,
        "A failed GPU's server goes through automated triage and then, mostly, a manual swap or RMA: AIReSim "
        "(DSN 2026, Table 1) uses 2 h automated and 2 days manual repair with 80 % going to manual; SemiAnalysis "
        "(100,000 H100 clusters, 2024) says repairs take hours to days.",
    ),
    "Host": (
        24.0,
        "Host parts (NIC, SSD, PSU, DIMM, CPU, chassis) are replaced from on-site stock within about a day; "
        "OPT-175B's logs say cloud node replacement 'can take hours' (metaseq chronicles).",
    ),
    "Network": (
        4.0,
        "A leaf switch or cable is replaced or re-seated by on-site staff within hours, and the domain's nodes "
        "come back together (a planner input: no published repair time).",
    ),
    "Unplanned Maintenance": (
        8.0,
        "An unplanned reboot, reimage or repair of one host: a working shift (a planner input: no published "
        "repair time).",
    ),
    "Dependency": (0.0, "Process scope: the hosts are fine and rejoin at the restart."),
    "Unknown": (0.0, "Process scope (NCCL timeouts): the hosts are fine and rejoin at the restart."),
}
#: Repair time of a category :data:`DEFAULT_REPAIR_HOURS` does not name.
OTHER_REPAIR_HOURS = 24.0
#: Nodes per failure domain when the scenario does not set one: the recovery strategy's default, the one the
#: window shows (one default for the pool and the tiers).
DEFAULT_NODES_PER_DOMAIN = Tiers().nodes_per_domain


def component_scope(component: Component) -> str:
    """A component's failure scope: the tiers model's (:func:`.scopes.scope_of`)."""
    from .tiers import scope_of

    return str(scope_of(component))


def nodes_per_domain_of(scenario: Scenario) -> int:
    """The scenario's failure-domain size (its tiers section's, else the tiers model's default); on rack-scale NVLink
    domains, the job's trays of one rack (docs/model.md, "Racks": the rack is the failure domain)."""
    if getattr(scenario, "uses_nvlink", False):
        return max(1, int(scenario.job_trays_per_rack))
    tiers = getattr(scenario, "tiers", None)
    if tiers is not None:
        return int(tiers.nodes_per_domain)
    return DEFAULT_NODES_PER_DOMAIN


def repair_hours_of(category: str, spares: Spares) -> float:
    """Mean repair hours of a node lost to a component of ``category``."""
    for cat, hours in spares.repair_hours:
        if cat == category:
            return hours
    return DEFAULT_REPAIR_HOURS.get(category, (OTHER_REPAIR_HOURS, ""))[0]


@dataclass(frozen=True)
class SparesParams:
    """The model in the engine's units: rates per hour, times in hours, one entry per failure class.

    A class is a scenario component; ``nodes[j]`` nodes go to repair per failure (0, 1 or the domain),
    for a mean of ``repair[j]`` hours; ``cont[j]`` says whether, in ``continue`` mode, the job continues
    (else it restarts from its checkpoint) and ``replicas[j]`` how many replicas a failure takes out.
    """

    rates: np.ndarray  # per hour, whole job, per class
    nodes: np.ndarray  # nodes lost per failure (int)
    repair: np.ndarray  # mean repair hours per class
    cont: np.ndarray  # bool per class
    replicas: np.ndarray  # replicas taken out per failure (int)
    mu: float  # planned per hour
    hours: float
    tau: float
    c: float
    r_unplanned: float  # detect + restart
    r_planned: float  # restart
    swap: float  # added to a restart after a failure that took nodes
    job_nodes: int
    spare_nodes: float  # math.inf: unlimited
    min_nodes: int | None  # shrink down to this many nodes; None: wait instead
    sigma: float | None  # lognormal sigma; None: exponential repairs
    mode: str
    share: float  # throughput share of one replica (replica_gpus / gpus)
    stall: float  # continue stall
    restart: float  # restart alone (a replica's rejoin)
    gpus_per_node: int

    @property
    def lam(self) -> float:
        return float(self.rates.sum())

    @property
    def node_loss_rates(self) -> np.ndarray:
        """Per class: node-losing failures per hour (0 for classes that take no node)."""
        return np.where(self.nodes > 0, self.rates, 0.0)

    @property
    def mean_nodes_in_repair(self) -> float:
        """M/G/infinity: node-loss rate times mean repair time, summed over classes (nodes)."""
        return float((self.rates * self.nodes * self.repair).sum())


@dataclass(frozen=True)
class FailureClasses:
    """Every failure class the simulation draws (:attr:`.scenario.Scenario.failure_components`: the components, then
    the correlated events), in hours: what each does to the pool and the replicas (docs/model.md, section 1)."""

    rates: np.ndarray  # per hour, whole job
    scopes: tuple[str, ...]  # "process", "node", "domain" or "correlated"
    nodes: np.ndarray  # nodes taken per failure (int)
    repair: np.ndarray  # their mean repair, hours (0 where none is taken)
    replicas: np.ndarray  # replicas a failure spans (int)
    cont: np.ndarray  # bool: in continue mode, the job continues after it
    job_nodes: int
    #: On rack-scale NVLink domains (docs/model.md, "Racks"; None without): the racks a failure takes when it moves
    #: them (``nodes`` is then their trays, warm spares included), and whether a rack's warm spare tray may cover it.
    racks: np.ndarray | None = None
    in_rack: np.ndarray | None = None

    @property
    def mean_nodes_in_repair(self) -> float:
        """M/G/infinity: node-loss rate times mean repair time, summed over classes (nodes; on racks with warm spare
        trays an upper bound: the failures a rack's spare covers take nothing from the pool)."""
        return float((self.rates * self.nodes * self.repair).sum())

    @property
    def node_loss_rate(self) -> float:
        """Failures per hour that take nodes, whole job."""
        return float(self.rates[self.nodes > 0].sum())


def failure_classes(scenario: Scenario, spares: Spares) -> FailureClasses:
    """The scenario's failure classes with their nodes, repairs and replicas: a ``process`` failure takes no node,
    a ``node`` one, a ``domain`` ``nodes_per_domain``, a correlated event ``correlated_domains`` domains' worth (never
    more than the job's); a class continues when it spans at most ``max_replicas_lost`` replicas and leaves one."""
    from .tiers import class_scopes

    gpn = scenario.gpus_per_node
    npd = nodes_per_domain_of(scenario)
    comps = scenario.failure_components
    scopes = class_scopes(scenario)
    job_nodes = scenario.job_nodes
    racks = in_rack = None
    if scenario.uses_nvlink:
        # A tray (node) failure stops its rack; a domain failure is its rack's; a correlated event takes as many
        # racks as domains. A rack that moves takes a whole spare rack (its trays, warm spares included).
        per_rack = {
            "process": 0,
            "node": 1,
            "domain": 1,
            CORRELATED_SCOPE: min(scenario.correlated_domains, scenario.racks),
        }
        racks = np.array([per_rack.get(s, 1) for s in scopes], dtype=np.int64)
        in_rack = np.array([s == "node" and scenario.rack_spare_trays > 0 for s in scopes], dtype=bool)
        nodes = racks * scenario.trays_per_rack
        stopped = np.minimum(racks * scenario.job_trays_per_rack, job_nodes)  # the job's trays they stop
    else:
        per_scope = {"process": 0, "node": 1, "domain": npd, CORRELATED_SCOPE: correlated_nodes(scenario)}
        nodes = np.minimum(np.array([per_scope.get(s, 1) for s in scopes], dtype=np.int64), job_nodes)
        stopped = nodes
    repair = np.array(
        [
            scenario.correlated_repair_hours if s == CORRELATED_SCOPE else repair_hours_of(c.category, spares)
            for c, s in zip(comps, scopes)
        ],
        dtype=float,
    )
    repair = np.where(nodes > 0, repair, 0.0)
    # Replicas one failure takes out: the nodes it loses, in replica-aligned domains. A failure continues when it
    # takes out few enough replicas and leaves at least one running (a job of one replica has no survivor to
    # continue on: it restarts from its checkpoint).
    rep_nodes = max(1, spares.replica_gpus // gpn)
    replicas = np.where(stopped > 0, -(-stopped // rep_nodes), 0).astype(np.int64)
    n_replicas = max(1, scenario.gpus // max(1, spares.replica_gpus))
    cont = (nodes > 0) & (replicas <= spares.max_replicas_lost) & (replicas < n_replicas)
    return FailureClasses(
        rates=np.array([c.rate_per_gpu_hour * scenario.gpus for c in comps], dtype=float),
        scopes=tuple(scopes),
        nodes=nodes,
        repair=repair,
        replicas=replicas,
        cont=cont,
        job_nodes=job_nodes,
        racks=racks,
        in_rack=in_rack,
    )


def spare_racks(scenario: Scenario) -> int | None:
    """On rack-scale NVLink domains, the whole racks the pool of spare nodes holds (its trays in racks of
    :attr:`.scenario.Scenario.trays_per_rack`; a part of a rack serves nothing); None for unlimited spares or without
    racks."""
    sp = scenario.spares
    if not scenario.uses_nvlink or sp is None or sp.spare_nodes is None:
        return None
    return int(sp.spare_nodes) // scenario.trays_per_rack


def correlated_nodes(scenario: Scenario) -> int:
    """The nodes one correlated event takes: ``correlated_domains`` failure domains, never more than the job's."""
    return int(min(scenario.job_nodes, nodes_per_domain_of(scenario) * scenario.correlated_domains))


def correlated_then(scenario: Scenario) -> str:
    """What the job does after a correlated event, in words: "each restores from storage", or in continue mode
    "each spans 1 replica of 1,024 GPUs: the job continues on the others" (or "... 3 replicas: the job restarts from
    storage")."""
    sp = scenario.spares
    if sp is None or sp.recovery_mode != "continue":
        return "each restores from storage"
    fc = failure_classes(scenario, sp)
    reps = int(fc.replicas[-1])
    spans = f"each spans {reps:,} replica{'' if reps == 1 else 's'} of {sp.replica_gpus:,} GPUs"
    return f"{spans}: the job {'continues on the others' if fc.cont[-1] else 'restarts from storage'}"


def correlated_caveats(scenario: Scenario) -> str:
    """What changes the correlated inputs' meaning, in words, each after "; " (empty when nothing does): a rate
    profile multiplies the rate; without a pool, a swap or continue mode, the nodes an event takes are replaced at
    once, so the domains and the repair move nothing."""
    out = []
    if scenario.rate_profile is not None and not all(m == 1.0 for _, m in scenario.rate_profile):
        out.append("the rate profile multiplies the rate")
    if not scenario.uses_spares:
        out.append("with unlimited spares the domains and the repair move nothing")
    return "".join(f"; {x}" for x in out)


def correlated_nodes_text(scenario: Scenario) -> str:
    """The nodes one correlated event takes, in words: "8 nodes", "1 node", "10 nodes (the whole job)"."""
    nodes = correlated_nodes(scenario)
    whole = nodes < nodes_per_domain_of(scenario) * scenario.correlated_domains
    return f"{nodes:,} node{'' if nodes == 1 else 's'}{' (the whole job)' if whole else ''}"


def spares_params(scenario: Scenario, spares: Spares, interval_min: float) -> SparesParams:
    """The scenario and its spares in hours, with the checkpoint interval given in minutes."""
    spares.validate(scenario)
    gpn = scenario.gpus_per_node
    fc = failure_classes(scenario, spares)
    min_nodes = None if spares.min_gpus is None else max(1, math.ceil(spares.min_gpus / gpn))
    return SparesParams(
        rates=fc.rates,
        nodes=fc.nodes,
        repair=fc.repair,
        cont=fc.cont,
        replicas=fc.replicas,
        mu=scenario.planned_per_day / 24.0,
        hours=scenario.hours,
        tau=interval_min / 60.0,
        c=scenario.write_s / 3600.0,
        r_unplanned=scenario.recovery_min / 60.0,
        r_planned=scenario.restart_at_size_min / 60.0,
        swap=spares.swap_min / 60.0,
        job_nodes=fc.job_nodes,
        spare_nodes=math.inf if spares.spare_nodes is None else float(spares.spare_nodes),
        min_nodes=min_nodes,
        sigma=spares.repair_sigma,
        mode=spares.recovery_mode,
        share=min(1.0, spares.replica_gpus / scenario.gpus),
        stall=spares.continue_stall_min / 60.0,
        restart=scenario.restart_at_size_min / 60.0,
        gpus_per_node=gpn,
    )


def restart_scenario(scenario: Scenario) -> Scenario:
    """The scenario with only the failures that restart the job from its checkpoint: in continue mode the
    failures that continue on the surviving replicas are left out (rate 0); otherwise the scenario itself.

    Its optimal checkpoint interval is the spares model's in continue mode: only restarts lose the work since
    the last checkpoint, and what a continuing failure costs (its stall, the replica's throughput while it
    is out) does not depend on the interval."""
    sp = scenario.spares
    if sp is None or sp.recovery_mode != "continue":
        return scenario
    try:
        cont = spares_params(scenario, sp, 30.0).cont
    except ValueError:  # inputs the spares model refuses: the run says why
        return scenario
    comps = tuple(
        dataclasses.replace(c, rate_per_gpu_hour=0.0) if goes_on else c for c, goes_on in zip(scenario.components, cont)
    )
    correlated_goes_on = scenario.uses_correlated and bool(cont[-1])
    return scenario.replace(
        components=comps, correlated_rate_per_day=0.0 if correlated_goes_on else scenario.correlated_rate_per_day
    )


def node_categories(scenario: Scenario) -> tuple[str, ...]:
    """The scenario's categories with a component that takes nodes away (the others have nothing to repair)."""
    return tuple(
        c
        for c in scenario.categories
        if any(component_scope(x) != "process" for x in scenario.components if x.category == c)
    )
