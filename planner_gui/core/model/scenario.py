"""Scenario data model: the inputs of one what-if question.

A :class:`Scenario` is an immutable value. Every field is in the unit its name
says. The defaults reproduce Meta's Llama 3 405B pre-training run ("The Llama
3 Herd of Models", arXiv 2407.21783, section 3.3.4, Table 5); the reasoning
behind each default that the paper does not give is in :data:`DEFAULT_NOTES`.
"""

from __future__ import annotations

import csv
import dataclasses
import functools
import math
from dataclasses import dataclass, field
from importlib import resources
from typing import Any, Literal, get_args

from ..util import fmt
from ..util.fmt import duration_hours, duration_min, number, plural

__all__ = [
    "CORRELATED_NAME",
    "CORRELATED_SCOPE",
    "DEFAULT_NOTES",
    "LLAMA3_DAYS",
    "LLAMA3_GPUS",
    "LLAMA3_PLANNED",
    "MAX_LEVER_PRICE_USD",
    "OPTIMAL",
    "PLACEMENTS",
    "RECOVERY_MODES",
    "RESTART_REFERENCE_GPUS",
    "SCOPES",
    "WEIBULL_SHAPES",
    "ClassScope",
    "Component",
    "Placement",
    "Profile",
    "RecoveryMode",
    "Scenario",
    "Scope",
    "Spares",
    "Storage",
    "Tiers",
    "llama3_components",
    "llama3_evidence",
]

#: Size and length of the Llama 3 snapshot behind the default rates.
LLAMA3_GPUS = 16_384
LLAMA3_DAYS = 54
#: Planned interruptions in the Llama 3 snapshot (firmware, configuration, data set updates).
LLAMA3_PLANNED = 47
#: Where a restart that grows with the job is anchored: ``restart_min`` is its value at this many GPUs (Llama 3's
#: 16,384, the size the restart's default is quoted for); see :attr:`Scenario.restart_at_size_min`.
RESTART_REFERENCE_GPUS = LLAMA3_GPUS

#: The most a lever may be priced at (``Scenario.lever_prices``), in dollars.
MAX_LEVER_PRICE_USD = 1e13

#: The Weibull shapes a component's node life may have (docs/model.md, "Node lives"): below 1 infant mortality,
#: above 1 wear-out; 1 is the exponential life of every other component.
WEIBULL_SHAPES = (0.3, 10.0)

#: The name (and category) of the correlated events' failure class (:attr:`Scenario.correlated_component`).
CORRELATED_NAME = "Correlated"
#: The component whose failures are silent data corruptions (Llama 3's Table 5 name; docs/model.md, "Silent data
#: corruption"): found late with ``sdc_detect_hours`` above 0.
SDC_NAME = "Silent Data Corruption"
#: The scope of that class (docs/model.md, "Correlated failures"): several domains at once, always restoring from
#: storage. Not a component's scope (:data:`SCOPES`): no component can have it.
CORRELATED_SCOPE = "correlated"

#: The value of ``checkpoint_interval_min`` that asks for Daly's optimum.
OPTIMAL = "optimal"

Interval = float | str
#: A rate profile: ``(day, multiplier)`` pairs, days from the window's start, the first at day 0; each
#: multiplier holds from its day to the next pair's (the last one for ever after).
Profile = tuple[tuple[float, float], ...]

#: What a failure loses besides the job's processes: ``process`` (nothing: host memory survives),
#: ``node`` (one server and its memory), ``domain`` (every node of one failure domain).
Scope = Literal["process", "node", "domain"]
#: Where a node's in-memory snapshot is replicated: on peers in its own failure domain or only in others.
Placement = Literal["same-domain", "other-domain"]
SCOPES: tuple[str, ...] = get_args(Scope)
#: The scope of a failure class: a component's, or the correlated events' (:data:`CORRELATED_SCOPE`).
ClassScope = Literal["process", "node", "domain", "correlated"]
PLACEMENTS: tuple[str, ...] = get_args(Placement)


@dataclass(frozen=True)
class Component:
    """One root cause of unplanned interruptions.

    Parameters
    ----------
    name
        Display name, unique within a scenario.
    category
        Group used for multipliers and colours (GPU, Host, Network, ...).
    rate_per_gpu_hour
        Unplanned interruptions this component causes per GPU per hour.
    count, exposure_gpu_hours
        The evidence the rate came from: ``count`` interruptions seen over ``exposure_gpu_hours``
        (both None: none given; see :func:`.rates.evidence_of` for the Llama 3 causes' own). A fit with a
        prior (:mod:`.incidents.prior`) counts the prior's weighted interruptions too: not always whole.
    """

    name: str
    category: str
    rate_per_gpu_hour: float
    count: float | None = None
    exposure_gpu_hours: float | None = None
    #: What a failure of it loses (``process``, ``node``, ``domain``); None: the default for its name or
    #: category (:func:`.tiers.scope_of`). It matters only with the fast (in-memory) tier on.
    scope: Scope | None = None

    @property
    def per_1000_gpu_days(self) -> float:
        """Interruptions per 1,000 GPU-days."""
        return self.rate_per_gpu_hour * 24_000.0

    @property
    def gpu_mtbf_hours(self) -> float:
        """Mean hours between interruptions seen by one GPU (inf for a zero rate)."""
        return math.inf if self.rate_per_gpu_hour == 0 else 1.0 / self.rate_per_gpu_hour


def llama3_components() -> tuple[Component, ...]:
    """The 18 root causes of Llama 3 Table 5, rates from their counts.

    Rate = count / (16,384 GPUs x 54 days x 24 h). The counts add to 419; the
    paper's printed 30.1% for "Faulty GPU" is a misprint (148/419 = 35.3%).
    """
    gpu_hours = LLAMA3_GPUS * LLAMA3_DAYS * 24.0
    return tuple(Component(name, cat, count / gpu_hours) for name, (cat, count) in _llama3_table().items())


@functools.cache
def _llama3_table() -> dict[str, tuple[str, int]]:
    """Table 5: each cause's category and count, in the table's order."""
    text = resources.files("planner_gui.core").joinpath("data/llama3_table5.csv").read_text("utf-8")
    return {r["component"]: (r["category"], int(r["interruptions"])) for r in csv.DictReader(text.splitlines())}


def llama3_evidence() -> dict[str, tuple[int, float]]:
    """Each Llama 3 cause's evidence: its Table 5 count and the snapshot's 16,384 x 54 x 24 GPU-hours."""
    gpu_hours = LLAMA3_GPUS * LLAMA3_DAYS * 24.0
    return {name: (count, gpu_hours) for name, (_, count) in _llama3_table().items()}


#: Where each default comes from; shown in tooltips, the CLI report and the docs.
DEFAULT_NOTES: dict[str, str] = {
    "gpus": "16,384 H100 GPUs: the Llama 3 405B run (Meta, arXiv 2407.21783, sec. 3.3.4).",
    "gpus_per_node": "8 GPUs per server, as in the Llama 3 cluster.",
    "days": "54 days: the length of the Llama 3 snapshot.",
    "components": (
        "18 root causes of Llama 3 Table 5; rate = count / (16,384 GPUs x 54 days x 24 h). "
        "419 unexpected interruptions in all, 1.97e-5 per GPU-hour."
    ),
    "planned_per_day": "47 planned interruptions in 54 days (Llama 3): firmware, configuration, data set updates.",
    "checkpoint_interval_min": (
        "'optimal' follows Daly's (2006) higher-order optimum for the current failure rate and write time. "
        "The paper gives no interval."
    ),
    "checkpoint_write_s": (
        "5 s of blocking write: with asynchronous checkpointing only the copy from GPU to host memory stalls "
        "training ('several seconds', MegaScale, NSDI 2024; 0.59 s stall for a 405B model, ByteCheckpoint, "
        "NSDI 2025). A fully blocking save takes about 51 s (ByteCheckpoint). With the in-memory (fast) tier on, "
        "what each persistent checkpoint blocks for on top of the fast stall: 0 when it only uploads the snapshot "
        "already in host memory."
    ),
    "detect_min": (
        "5 min from fault to notice: MegaScale reports detection and diagnosis in under 10 minutes; Llama 3 "
        "handled all but 3 of 466 interruptions by automation."
    ),
    "detect_by": (
        "Empty: every cause is noticed after the detection above. A cause named here (a component, or every "
        "component of a category) is noticed after its own time: an error the GPU driver reports (an XID) in "
        "seconds; a collective that hangs only at the NCCL watchdog's timeout (10 min by default in PyTorch; "
        "Marin's GB200 run saw 15-minute silent hangs). A planner's estimate: set your watchdog's."
    ),
    "restart_min": (
        "5 min to reschedule, initialise and load: MegaScale initialises in under 30 s at >10,000 GPUs; "
        "ByteCheckpoint loads a 405B checkpoint in 129 s; the rest is rescheduling onto spare nodes."
    ),
    "restart_per_log2_gpus_min": (
        "0: the restart is the same at every size. On, the restart above is the one at 16,384 GPUs (the Llama 3 "
        "size its default is quoted for) and each doubling of the GPU count adds this much (each halving takes it "
        "off, never below 0): what grows with the job, such as every rank's rendezvous and the communicators' "
        "set-up, and loading where the restart holds it (with the in-memory tier, loading from storage is the "
        "persistent restore, which does not grow). A planner's estimate: no published figure gives this growth; "
        "bracket it in the tornado with --bounds."
    ),
    "slow_rate_per_gpu_hour": (
        "0: no node runs slow. Fail-slows (stragglers) are common in large synchronous training: on a production "
        "cluster of over 10,000 GPUs they lasted from tens of seconds to nearly ten hours and delayed the average job "
        "by 1.34x, and the usual remedy is to treat one as a failure, with a checkpoint and a restart without the "
        "node (Falcon, arXiv 2410.12588). No published rate per GPU-hour: a planner's estimate."
    ),
    "slow_factor": (
        "0.5: the synchronous job runs at half its speed while a node is slow (every step waits for the slowest "
        "rank). A planner's estimate: Falcon (arXiv 2410.12588) reports slowdowns from a few percent to several "
        "times; measure your own from per-rank step times."
    ),
    "slow_detect_min": (
        "30 min: automated per-rank step timing (NVIDIA Resiliency "
        "Extension's straggler detection; Falcon, arXiv 2410.12588, finds one in minutes) against hours by hand. A "
        "planner's estimate."
    ),
    "save_fail_p": (
        "0: every checkpoint save succeeds. A save can fail (a storage error, a timeout, a rank that dies while "
        "writing, a partial write found at finalization); the job then keeps the checkpoint before it until the "
        "next save. Writes made atomic (write, fsync, rename) make a failed save cost only this. No published rate: "
        "a planner's estimate."
    ),
    "restore_fail_p": (
        "0: every restore from the in-memory tier succeeds. A restore checks the snapshot it loads (every shard "
        "present, checksums equal); when it fails, the job falls back to the persistent checkpoint in storage, as "
        "in-memory checkpointing systems do when a peer's copy is lost (Gemini, SOSP 2023). No published rate: a "
        "planner's estimate."
    ),
    "sdc_detect_hours": (
        "0: a silent data corruption is found at once, like any failure. Many are found late: corruption starts at "
        "a fault and is seen only when the loss curve or a cross-replica check shows it; every checkpoint taken "
        "since is poisoned, so the job rolls back to the last clean one. Llama 3 counted 6 SDC interruptions in 54 "
        "days on 16,384 GPUs (arXiv 2407.21783, Table 5); Meta and Google describe them as surfacing hours to "
        "days after they start (Dixit et al., arXiv 2102.11245; Hochschild et al., HotOS 2021). The delay is "
        "exponential with this mean: a planner's estimate."
    ),
    "retained_checkpoints": (
        "0: the persistent tier keeps every checkpoint. A finite K keeps the last K persistent saves (rotation, "
        "as a checkpoint manager's max_to_keep does), so a corruption found K saves or more after it started has no "
        "clean checkpoint left and the run starts over. Keep enough to cover the detection delay."
    ),
    "bad_share": (
        "0: every node fails at its component's rate. Some come from a bad batch (a flaky board, a marginal part, "
        "a bad firmware image) and fail again and again until a repair really fixes them: this share of the job's "
        "nodes, and of the spare pool's, is bad at the job's start. AIReSim's default case takes 15 % (AIReSim, "
        "arXiv 2603.07041, github.com/karthikp-ubc/airesim); no fleet report gives a share: a planner's estimate."
    ),
    "bad_multiplier": (
        "5: a bad node fails five times as often as a good one, by every cause that takes a node. AIReSim's default "
        "bad server fails at its random rate plus 5x it in systematic failures, 6x in all (arXiv 2603.07041). A "
        "planner's estimate: compare the repeat failures per node in your own incident log."
    ),
    "diagnosis_p": (
        "1: the failed node is always the one pulled. With less, the rest of the time a healthy node is pulled "
        "instead: a bad one stays in the job and fails again, and a good node goes to repair for nothing "
        "(AIReSim's diagnosis uncertainty, arXiv 2603.07041). A planner's estimate."
    ),
    "repair_fail_p": (
        "0: a repair fixes the bad node it gets. A repair can report success and leave the node bad (AIReSim's "
        "defaults: an automated repair 40 %, a manual one 20 %, 80 % escalated to manual: 24 % in all, arXiv "
        "2603.07041); with a finite pool the node comes back to it still bad. A planner's estimate."
    ),
    "correlated_rate_per_day": (
        "0: failures come one cause at a time. Some events take several failure domains at once: a power feed or a "
        "PDU row that trips, a cooling loop that fails, a switch fabric that drops a pod (OPT-175B's logbook, metaseq "
        "projects/OPT/chronicles, records 5 hosts failing together). Every node they take is lost with its memory, "
        "so the job restores from storage even with the in-memory tier on. No published rate: a planner's estimate."
    ),
    "correlated_domains": (
        "4 failure domains (8 nodes at the default 2 nodes per domain, close to OPT-175B's 5 hosts failing "
        "together): how much one event takes. A planner's estimate: a PDU row or a cooling loop of your floor plan."
    ),
    "correlated_repair_hours": (
        "8 h until the nodes a correlated event took are back (power or cooling restored, the hosts checked): a "
        "working shift, as for unplanned maintenance. A planner's estimate."
    ),
    "nvlink_gpus": (
        "0: no rack-scale NVLink domain; each node stands alone. GB200/GB300 NVL72: 72 GPUs in one NVLink domain, 18 "
        "compute trays of 4 GPUs, the tray the replaceable unit (NVIDIA GB200 NVL72 documentation). A tray that fails "
        "stops its whole rack's slice of the job (blast radius 72 GPUs, where an H100 server's is 8) until a warm "
        "spare tray of the rack takes its place, or the slice moves to a spare rack of the pool."
    ),
    "rack_spare_trays": (
        "0: every tray of a rack runs the job. Operators of NVL72 racks hold 8 of 72 GPUs (2 trays) as warm spares "
        '(clockwork.io, "Common approaches to fault-tolerant AI training", a secondary source): a failed tray is '
        "then swapped within its rack and the rack stays; only when its spares are all in repair does the rack move."
    ),
    "rack_move_min": (
        "0 min: a failure that moves its rack to a spare rack costs the swap alone, as one a warm spare covers does. "
        "Setting the job's slice up on a spare rack (scheduling it there, the new NVLink domain's communicators, the "
        "data loaders) takes longer than taking in a warm tray of the same domain: this is how much longer, for a "
        "failure whose rack moves. No published figure: a planner's estimate."
    ),
    "trials": "1,000 Monte Carlo trials: the standard error of goodput is then a few hundredths of a percent.",
    "seed": "Fixed seed: the same scenario gives the same numbers.",
    "gpu_hour_cost_usd": "Planner input with no published source: the price you pay per GPU-hour.",
    "train_flops": "3.8e25 FLOPs: Llama 3 405B's pre-training compute (arXiv 2407.21783).",
    "peak_tflops": "989 TFLOP/s: H100 SXM peak dense BF16 (NVIDIA datasheet; 1,979 with sparsity).",
    "mfu": "40 %: Llama 3 405B reached 38-43 % BF16 MFU on 8k-16k H100s (arXiv 2407.21783, Table 4).",
    "compute_gpu_hours": "GPU-hours of pure compute, instead of FLOPs, peak and MFU: a planner input.",
    "checkpoint_gb_per_gpu": (
        "What each GPU writes per checkpoint: 1 MB to 4 GB per GPU in Llama 3 (arXiv 2407.21783, sec. 3.3.4)."
    ),
    "storage_gb_s": (
        "Sustained write bandwidth of the whole storage: Llama 3's Tectonic sustained 2 TB/s (2,000 GB/s), "
        "7 TB/s at peak (arXiv 2407.21783, sec. 3.3.4)."
    ),
    "rate_uncertainty": (
        "Off: the rates are known. On: each trial draws every rate from its posterior given its evidence (Gamma, "
        "Jeffreys prior: shape count + 1/2, rate exposure); a Llama 3 cause's evidence is its Table 5 count over "
        "16,384 x 54 x 24 GPU-hours."
    ),
    "rate_profile": (
        "Multipliers of the unplanned rates over the run's days, e.g. a new cluster's burn-in; none: constant "
        "rates, as in the Llama 3 snapshot."
    ),
    "weibull": (
        "Empty: every node's life is exponential (a constant hazard, failures a Poisson stream). A component named "
        "here fails at each node after a Weibull life of its shape, renewed at each failure: below 1 infant "
        "mortality (a new node fails early, then settles; Schroeder and Gibson, DSN 2006, fit the times between "
        "failures of over 20 HPC systems at LANL with shapes 0.7-0.8), above 1 wear-out. Its rate is the lives' "
        "long-run rate, so a scale sets the rate (and clearing the life keeps it); on a new cluster the first "
        "weeks differ from the long run. A planner's estimate: fit your fleet's repair log."
    ),
    "new_cluster": (
        "Off: the window is a stretch of a long run (nodes in repair and node lives in their steady state). On: a "
        "new cluster, every node new and none in repair at the start, the job fresh."
    ),
    "fast_enabled": (
        "Off: every failure restores from the persistent checkpoint (as in 2019). On: snapshots in host memory, "
        "replicated to peer nodes, restore any failure that leaves a copy (Gemini, SOSP 2023; ByteCheckpoint, "
        "NSDI 2025; MegaScale, NSDI 2024)."
    ),
    "fast_interval_min": (
        "'optimal': the exact optimum for the fast stall and every unplanned failure (Daly's without planned "
        "interruptions). Gemini can snapshot every iteration."
    ),
    "fast_stall_s": "0.59 s: ByteCheckpoint's training stall for a 405B model on 8,960 GPUs (NSDI 2025).",
    "fast_restore_min": (
        "0.17 min (10 s): ByteCheckpoint's 129 s load from storage made 13x faster from CPU memory, as Gemini "
        "reports (SOSP 2023)."
    ),
    "fast_replicas": (
        "1 peer copy: Gemini's default (a group of two machines holds each other's snapshots). In this model one "
        "replica on a surviving node is enough and the copy's time is inside the fast stall, so more than one "
        "changes nothing (two nodes failing at once are not modelled); 0 sends node failures to storage."
    ),
    "fast_placement": (
        "other-domain: replicas never share a rack or leaf switch, so a domain failure leaves a copy. "
        "same-domain: cheaper traffic, but a domain failure falls back to the persistent tier."
    ),
    "nodes_per_domain": (
        "2: a Llama 3 rack holds two 8-GPU servers under one top-of-rack switch (arXiv 2407.21783, sec. 3.3.1)."
    ),
    "persistent_upload_min": (
        "0: the checkpoint counts as soon as its blocking write ends (today's model). ByteCheckpoint saves a 405B "
        "checkpoint in 51 s end to end: a background upload of about a minute."
    ),
    "persistent_restore_min": (
        "0: loading is inside the restart time. ByteCheckpoint loads a 405B checkpoint in 129 s (2.15 min)."
    ),
    "scope": (
        "What a failure takes with it: process (host memory survives), node (one server), domain (every node of "
        "a rack or leaf switch). Defaults for the Llama 3 causes in data/llama3_scopes.csv, each with its reason."
    ),
    "count": "Interruptions seen: the evidence behind the rate (with the exposure).",
    "exposure_gpu_hours": "GPU-hours watched while they were counted: the evidence behind the rate (with the count).",
}


#: Llama 3 405B's pre-training compute (FLOPs), H100 SXM peak dense BF16 (TFLOP/s per GPU) and a
#: model FLOPs utilisation in Llama 3's published 38-43 % range (arXiv 2407.21783, Table 4).
LLAMA3_TRAIN_FLOPS = 3.8e25
H100_PEAK_TFLOPS = 989.0
LLAMA3_MFU = 0.40


@dataclass(frozen=True)
class Training:
    """The work a training run must do, for the time it takes and what it costs.

    Either ``train_flops`` (with the GPU's ``peak_tflops`` and the achieved ``mfu``) or
    ``compute_gpu_hours`` (GPU-hours of pure compute, at 100 % goodput) says how much; exactly one is set.
    """

    train_flops: float | None = LLAMA3_TRAIN_FLOPS
    peak_tflops: float = H100_PEAK_TFLOPS
    mfu: float = LLAMA3_MFU
    compute_gpu_hours: float | None = None

    @property
    def gpu_hours(self) -> float:
        """GPU-hours of pure compute the run needs (what 100 % goodput would take)."""
        if self.compute_gpu_hours is not None:
            return self.compute_gpu_hours
        assert self.train_flops is not None
        return self.train_flops / (self.peak_tflops * 1e12 * self.mfu * 3600.0)


@dataclass(frozen=True)
class Storage:
    """What a checkpoint writes and how fast storage takes it: an optional way to set the blocking write.

    When a scenario has one, its blocking write is ``gpus x checkpoint_gb_per_gpu / storage_gb_s`` seconds
    (every GPU writes its share at once, through one shared bandwidth), in place of ``checkpoint_write_s``.
    """

    checkpoint_gb_per_gpu: float
    storage_gb_s: float

    def write_s(self, gpus: int) -> float:
        """Seconds to write one checkpoint of ``gpus`` GPUs."""
        return gpus * self.checkpoint_gb_per_gpu / self.storage_gb_s


@dataclass(frozen=True)
class Tiers:
    """The recovery strategy beyond today's single persistent checkpoint (docs/tiers.md).

    The persistent tier's interval and blocking stall are the scenario's ``checkpoint_interval_min`` and
    write (:attr:`Scenario.write_s`); everything else is here. Times are in the unit their names say.
    With the fast tier off, no upload time and no restore time, the model is exactly today's.
    """

    #: The in-memory tier is on: snapshots in host memory, replicated to ``fast_replicas`` peer nodes.
    fast_enabled: bool = False
    #: Compute between fast snapshots, minutes, or "optimal".
    fast_interval_min: float | str = OPTIMAL
    #: Training stall per fast snapshot (GPU to host memory, and to the replicas), seconds.
    fast_stall_s: float = 0.59
    #: Time to restore from the fast tier after detection and restart, minutes.
    fast_restore_min: float = 0.17
    #: Peer nodes holding a copy of each node's snapshot (0: only its own host memory).
    fast_replicas: int = 1
    #: Whether those peers may share the node's failure domain.
    fast_placement: Placement = "other-domain"
    #: Nodes per failure domain (a rack, a leaf switch, a power feed). With 1, a domain is a node.
    nodes_per_domain: int = 2
    #: Wall-clock time of a background upload of a checkpoint to persistent storage, minutes.
    persistent_upload_min: float = 0.0
    #: Time to restore from the persistent tier after detection and restart, minutes.
    persistent_restore_min: float = 0.0

    @property
    def is_todays(self) -> bool:
        """Whether the strategy is today's single blocking checkpoint (fast tier off, no upload, no restore)."""
        return not self.fast_enabled and self.persistent_upload_min == 0 and self.persistent_restore_min == 0

    def beyond_today(self) -> str:
        """In words, what makes the strategy more than today's single blocking checkpoint ("" if nothing)."""
        parts = [
            text
            for text, on in (
                ("the fast checkpoint tier", self.fast_enabled),
                (f"a background upload of {self.persistent_upload_min:g} min", self.persistent_upload_min > 0),
                (f"a persistent restore of {self.persistent_restore_min:g} min", self.persistent_restore_min > 0),
            )
            if on
        ]
        return " and ".join(filter(None, (", ".join(parts[:-1]), *parts[-1:])))  # "a, b and c"

    def validate(self) -> None:
        """Raise ValueError naming the first input out of range."""
        for name in ("fast_stall_s", "fast_restore_min", "persistent_upload_min", "persistent_restore_min"):
            value = getattr(self, name)
            if not (math.isfinite(value) and value >= 0):
                raise ValueError(f"{name} must be a finite number >= 0 (got {value!r})")
        if not isinstance(self.fast_interval_min, str):
            if not (math.isfinite(self.fast_interval_min) and self.fast_interval_min > 0):
                raise ValueError(f"fast_interval_min must be > 0 or 'optimal' (got {self.fast_interval_min!r})")
        elif self.fast_interval_min != OPTIMAL:
            raise ValueError(f"fast_interval_min must be > 0 or 'optimal' (got {self.fast_interval_min!r})")
        if self.fast_replicas < 0:
            raise ValueError(f"fast_replicas must be >= 0 (got {self.fast_replicas!r})")
        if self.nodes_per_domain < 1:
            raise ValueError(f"nodes_per_domain must be >= 1 (got {self.nodes_per_domain!r})")
        if self.fast_placement not in PLACEMENTS:
            raise ValueError(f"fast_placement must be one of {PLACEMENTS} (got {self.fast_placement!r})")
        same = self.fast_placement == "same-domain"
        if self.fast_enabled and same and self.fast_replicas > self.nodes_per_domain - 1:
            raise ValueError(self.same_domain_misfit())  # (with the fast tier off its replicas are not used)

    def same_domain_misfit(self) -> str:
        """Why ``fast_replicas`` replicas do not fit in the same domain (one line)."""
        room = self.nodes_per_domain - 1
        holds = (
            "no other node for a replica" if room == 0 else f"room for {fmt.plural(room, 'replica')} on its other nodes"
        )
        return (
            f"same-domain placement: a domain of {fmt.plural(self.nodes_per_domain, 'node')} has {holds}; asked for "
            f"{fmt.plural(self.fast_replicas, 'replica')} (use fewer replicas, more nodes per domain, or other-domain)"
        )


def _detect_of(by: dict[str, float], component: Component, default: float) -> float:
    """A component's detection: its own entry of ``by``, else its category's, else ``default``."""
    return by.get(component.name, by.get(component.category, default))


@dataclass(frozen=True)
class Scenario:
    """Every input of one simulation; see :data:`DEFAULT_NOTES` for the defaults' sources."""

    name: str = "Llama 3 405B (16,384 H100, 54 days)"
    gpus: int = LLAMA3_GPUS
    gpus_per_node: int = 8
    days: float = float(LLAMA3_DAYS)
    components: tuple[Component, ...] = field(default_factory=llama3_components)
    planned_per_day: float = LLAMA3_PLANNED / LLAMA3_DAYS
    checkpoint_interval_min: Interval = OPTIMAL
    checkpoint_write_s: float = 5.0
    detect_min: float = 5.0
    #: Detection by cause (docs/model.md 2.2): (component or category name, minutes) pairs; a failure of a
    #: component named here, else of a category named here, is noticed after that long; others after
    #: ``detect_min``. Empty: every cause after ``detect_min``.
    detect_by: tuple[tuple[str, float], ...] = ()
    #: Node lives that are not exponential (docs/model.md, "Node lives"): (component name, Weibull shape) pairs. Each
    #: of the job's node positions fails of that component after a Weibull life of that shape, renewed at each
    #: failure; the component's rate stays its long-run rate, so the life's scale follows from it
    #: (:meth:`weibull_scale_hours`). Empty: every life is exponential.
    weibull: tuple[tuple[str, float], ...] = ()
    restart_min: float = 5.0
    #: Minutes the restart grows by each time the GPU count doubles (rendezvous and loading at scale); 0: the
    #: restart is ``restart_min`` at every size (see :attr:`restart_at_size_min`).
    restart_per_log2_gpus_min: float = 0.0
    #: Fail-slow nodes (docs/model.md, "Fail-slow nodes"): episodes per GPU-hour (0: none), the job's speed while
    #: one is under way (0-1), and minutes from its start to the slow node's drain.
    slow_rate_per_gpu_hour: float = 0.0
    slow_factor: float = 0.5
    slow_detect_min: float = 30.0
    #: Checkpoints that fail (docs/model.md 2.1 and 2.2): the chance that a save fails (a snapshot, or a
    #: persistent point's copy to storage), and that a restore from the fast tier fails its validation.
    save_fail_p: float = 0.0
    restore_fail_p: float = 0.0
    #: Silent data corruption (docs/model.md, "Silent data corruption"): the mean hours from a corruption's start
    #: to its detection (0: found at once, an ordinary failure of its component), and the persistent checkpoints
    #: kept (0: every one).
    sdc_detect_hours: float = 0.0
    retained_checkpoints: int = 0
    #: Bad nodes (docs/model.md, "Bad nodes"): the share of the job's nodes and the pool's that are bad at the job's
    #: start (0: none), how many times as often a bad node fails, the chance the failed node is the one pulled (else
    #: a healthy one is), and the chance a repair leaves a bad node bad.
    bad_share: float = 0.0
    bad_multiplier: float = 5.0
    diagnosis_p: float = 1.0
    repair_fail_p: float = 0.0
    #: Correlated failures (docs/model.md, "Correlated failures"): events per day of the whole job (0: none), the
    #: failure domains each takes at once, and the mean hours until their nodes are back.
    correlated_rate_per_day: float = 0.0
    correlated_domains: int = 4
    correlated_repair_hours: float = 8.0
    #: Rack-scale NVLink domains (docs/model.md, "Racks"): GPUs per NVLink domain, a rack (72 on GB200 NVL72; 0:
    #: none, every node stands alone), and the compute trays (nodes) of each rack held back as warm spares.
    nvlink_gpus: int = 0
    rack_spare_trays: int = 0
    #: Minutes a failure that moves racks adds to its swap: the job's slice set up on a spare rack (0: a move costs
    #: the swap alone, as a failure a warm spare covers does).
    rack_move_min: float = 0.0
    trials: int = 1000
    seed: int = 20240723
    gpu_hour_cost_usd: float = 2.5
    #: The work to do, for time-to-train and cost; None: the window alone is simulated.
    training: Training | None = None
    #: Checkpoint size and storage bandwidth; when set, they give the blocking write (see :attr:`write_s`).
    storage: Storage | None = None
    #: Draw each trial's component rates from their posteriors (:mod:`.rates`); off: the rates as given.
    rate_uncertainty: bool = False
    #: Multipliers of every unplanned rate over the window's days (:mod:`.profiles`); None: constant rates.
    rate_profile: Profile | None = None
    #: A new cluster (a burn-in): at the window's start no node is in repair and the job starts fresh, instead
    #: of a snapshot of a long run in its steady state (docs/model.md, "Where the world starts").
    new_cluster: bool = False
    #: The recovery strategy (:class:`Tiers`); None: today's single blocking checkpoint.
    tiers: Tiers | None = None
    #: Spare nodes, repairs and the recovery mode (:class:`.model.spares.Spares`); None: unlimited spares.
    spares: Spares | None = None
    #: What a planner would pay for each lever's improvement (docs/cli.md, sensitivity): (lever, dollars) pairs, by
    #: the lever's name ("detection", "restart", "in-memory tier", "all failure rates", ...).
    lever_prices: tuple[tuple[str, float], ...] = ()

    # -- derived quantities -------------------------------------------------
    @property
    def rate_per_gpu_hour(self) -> float:
        """Total unplanned interruption rate per GPU-hour."""
        return math.fsum(c.rate_per_gpu_hour for c in self.components)

    @property
    def failure_rate_per_hour(self) -> float:
        """Cluster-wide unplanned interruptions per hour (1 / cluster MTBF): the components' and the correlated
        events'."""
        return self.rate_per_gpu_hour * self.gpus + self.correlated_per_hour

    @property
    def uses_correlated(self) -> bool:
        """Whether correlated failures happen (a rate above 0)."""
        return self.correlated_rate_per_day > 0.0

    @property
    def correlated_per_hour(self) -> float:
        """Correlated events per hour of the whole job (0 without)."""
        return self.correlated_rate_per_day / 24.0

    @property
    def correlated_component(self) -> Component | None:
        """The correlated events as one more failure class (docs/model.md, "Correlated failures"): named
        :data:`CORRELATED_NAME` in its own category (so ``detect_by`` can name it), its rate per GPU-hour the events'
        at this size; None without correlated failures."""
        if not self.uses_correlated:
            return None
        return Component(CORRELATED_NAME, CORRELATED_NAME, self.correlated_per_hour / max(self.gpus, 1))

    @property
    def failure_components(self) -> tuple[Component, ...]:
        """Every failure class the simulation draws: the components, then the correlated events when on."""
        extra = self.correlated_component
        return self.components if extra is None else (*self.components, extra)

    def correlated_text(self, *, short: bool = False) -> str:
        """The correlated-failure inputs in words: "off", or "0.1 a day (one every 10 days), 4 domains each, back
        in 8 h"; ``short``: "0.1/day, 4 domains, 8 h", for a table's cell."""
        if not self.uses_correlated:
            return "off"
        rate, gap = fmt.number(self.correlated_rate_per_day), duration_hours(24.0 / self.correlated_rate_per_day)
        domains = f"{self.correlated_domains:,} domain{'s' if self.correlated_domains != 1 else ''}"
        back = duration_hours(self.correlated_repair_hours)
        if short:
            return f"{rate}/day, {domains}, back in {back}"
        return f"{rate} a day (one every {gap}), {domains} each, back in {back}"

    @property
    def cluster_mtbf_hours(self) -> float:
        """Mean hours between unplanned interruptions of the whole job."""
        lam = self.failure_rate_per_hour
        return math.inf if lam == 0 else 1.0 / lam

    @property
    def gpu_mtbf_hours(self) -> float:
        """Mean hours between unplanned interruptions charged to one GPU."""
        rate = self.rate_per_gpu_hour
        return math.inf if rate == 0 else 1.0 / rate

    @property
    def hours(self) -> float:
        """Length of the wall-clock window in hours."""
        return self.days * 24.0

    @property
    def restart_at_size_min(self) -> float:
        """The restart at this job's size, minutes: with the restart growing with the job, ``restart_min`` is the
        restart at :data:`RESTART_REFERENCE_GPUS` and each doubling of the GPU count from there adds
        ``restart_per_log2_gpus_min`` (each halving takes it off, never below 0; docs/model.md, "Restart at scale").
        Every engine, closed form and analysis takes the restart from here, so a sweep over the GPU count moves it."""
        if self.restart_per_log2_gpus_min == 0.0:
            return self.restart_min
        doublings = math.log2(max(self.gpus, 1) / RESTART_REFERENCE_GPUS)
        return max(0.0, self.restart_min + self.restart_per_log2_gpus_min * doublings)

    def restart_text(self, *, short: bool = False) -> str:
        """The restart in use, in words: "5 min", or with a growth "5.7 min at 100,000 GPUs (5 min at 16,384 + 0.25
        min per doubling)"; ``short``: "5.7 min (+0.25 min per doubling)", for a table's cell."""
        if self.restart_per_log2_gpus_min == 0.0:
            return f"{number(self.restart_min)} min"
        growth = f"{number(self.restart_per_log2_gpus_min)} min per doubling"
        at = duration_min(self.restart_at_size_min)
        if short:
            return f"{at} (+{growth})"
        if self.gpus == RESTART_REFERENCE_GPUS:
            return f"{number(self.restart_min)} min at {self.gpus:,} GPUs (+{growth})"
        return f"{at} at {self.gpus:,} GPUs ({number(self.restart_min)} min at {RESTART_REFERENCE_GPUS:,} + {growth})"

    def detect_min_of(self, component: Component) -> float:
        """Minutes from a failure of ``component`` to noticing it: its own entry of :attr:`detect_by`, else its
        category's, else ``detect_min``."""
        return _detect_of(dict(self.detect_by), component, self.detect_min)

    @property
    def uses_detect_by(self) -> bool:
        """Whether some cause is noticed after another time than ``detect_min``."""
        by = dict(self.detect_by)
        return bool(by) and any(_detect_of(by, c, self.detect_min) != self.detect_min for c in self.failure_components)

    def detect_by_text(self) -> str:
        """Detection by cause in words: "NCCL Watchdog Timeouts 15 min, GPU 0.1 min" (empty without)."""
        return ", ".join(f"{name} {duration_min(v)}" for name, v in self.detect_by)

    def weibull_shape_of(self, component: Component) -> float:
        """The Weibull shape of a node's life for ``component`` (1: exponential, the default)."""
        return dict(self.weibull).get(component.name, 1.0)

    @property
    def job_nodes(self) -> int:
        """The nodes the job runs on: the GPUs in whole nodes."""
        return max(1, math.ceil(self.gpus / self.gpus_per_node))

    @property
    def uses_nvlink(self) -> bool:
        """Whether the job is laid out on rack-scale NVLink domains (docs/model.md, "Racks")."""
        return self.nvlink_gpus > 0

    @property
    def trays_per_rack(self) -> int:
        """Compute trays (nodes) in one NVLink rack, its warm spares included (0 without racks)."""
        return self.nvlink_gpus // self.gpus_per_node if self.uses_nvlink else 0

    @property
    def job_trays_per_rack(self) -> int:
        """The trays of one rack the job runs on: the rack's less its warm spares (0 without racks)."""
        return max(self.trays_per_rack - self.rack_spare_trays, 0)

    @property
    def racks(self) -> int:
        """The racks the job is laid out on (0 without racks): its nodes in racks of :attr:`job_trays_per_rack`."""
        if not self.uses_nvlink or self.job_trays_per_rack < 1:
            return 0
        return math.ceil(self.job_nodes / self.job_trays_per_rack)

    @property
    def rack_repairs_matter(self) -> bool:
        """Whether repair times matter to racks whatever the pool: a warm spare tray is busy while its failed tray is
        repaired, so a repair's length decides whether the next failure of its rack moves it."""
        return self.uses_nvlink and self.rack_spare_trays > 0

    @property
    def warm_spare_gpus(self) -> int:
        """The GPUs of the racks' warm spare trays, held out of the job (0 without racks)."""
        return self.racks * self.rack_spare_trays * self.gpus_per_node

    def rack_text(self, *, short: bool = False) -> str:
        """The rack inputs in words: "off", or "NVLink domains of 72 GPUs: 18 trays of 4 GPUs, 2 held as warm
        spares; the job on 1,563 racks"; ``short``: "72 GPUs, 2 spare trays", for a table's cell."""
        if not self.uses_nvlink:
            return "off"
        spares = f"{self.rack_spare_trays:,} spare tray{'' if self.rack_spare_trays == 1 else 's'}"
        move = f", a move {duration_min(self.rack_move_min)} more" if self.rack_move_min else ""
        if short:
            return f"{self.nvlink_gpus:,} GPUs, {spares}{move}"
        held = (
            f"{self.rack_spare_trays:,} held as warm spare{'' if self.rack_spare_trays == 1 else 's'}"
            if self.rack_spare_trays
            else "no warm spare"
        )
        trays = plural(self.trays_per_rack, "tray")
        return (
            f"NVLink domains of {self.nvlink_gpus:,} GPUs: {trays} of {self.gpus_per_node:,} "
            f"GPUs, {held}; the job on {plural(self.racks, 'rack')}"
        )

    def rack_move_text(self) -> str:
        """What a move to a spare rack costs beyond the swap, in words (empty without racks or a move time)."""
        if not self.uses_nvlink or not self.rack_move_min:
            return ""
        return f"a move to a spare rack takes {duration_min(self.rack_move_min)} more than a swap"

    @property
    def uses_weibull(self) -> bool:
        """Whether some component that fails has a node life that is not exponential."""
        by = dict(self.weibull)
        return any(by.get(c.name, 1.0) != 1.0 and c.rate_per_gpu_hour > 0 for c in self.components)

    @property
    def lived_components(self) -> tuple[tuple[Component, float], ...]:
        """The components given a node life, each with its shape (in :attr:`weibull`'s order; names that are no
        component's left out)."""
        comps = {c.name: c for c in self.components}
        return tuple((comps[n], k) for n, k in self.weibull if n in comps)

    @property
    def lives_vary(self) -> bool:
        """Whether node lives make the rate vary over the window: a new cluster with lives that are not exponential
        (its nodes' ages change the rate, as a profile does)."""
        return self.new_cluster and self.uses_weibull

    @property
    def nodes_vary(self) -> bool:
        """Whether the nodes' own states make the job's rate vary over the window: node lives on a new cluster
        (:attr:`lives_vary`), or bad nodes, fewer as repairs fix them (docs/model.md, "Bad nodes"). Its interruptions
        are then one every (the window over their expected count)."""
        return self.lives_vary or self.uses_bad

    def weibull_mean_life_hours(self, component: Component) -> float:
        """The mean hours of one node position's life for ``component``: the job's nodes over its rate for the whole
        job, so that the positions' failures come at the component's rate in the long run (inf at rate 0)."""
        rate = component.rate_per_gpu_hour * self.gpus
        return math.inf if rate <= 0 else self.job_nodes / rate

    def weibull_scale_hours(self, component: Component) -> float:
        """The Weibull scale (characteristic life, hours) of a node's life for ``component``: its mean life over
        ``Gamma(1 + 1/shape)``."""
        return self.weibull_mean_life_hours(component) / math.gamma(1.0 + 1.0 / self.weibull_shape_of(component))

    def with_weibull(self, entries: tuple[tuple[str, float, float | None], ...]) -> Scenario:
        """The scenario with these (component name, shape, scale hours) node lives: each named component's rate
        becomes the long-run rate of its positions' lives (a scale of None keeps the rate, and the scale follows
        from it). A rate that gives the scale already (within 1e-9) is kept as it is, so that a scenario written
        and read back is the same. The names must be the scenario's components'."""
        by = {name: (shape, scale) for name, shape, scale in entries}
        comps = []
        for c in self.components:
            if c.name in by and by[c.name][1] is not None:
                shape, scale = by[c.name]
                assert scale is not None
                rate = self.job_nodes / (scale * math.gamma(1.0 + 1.0 / shape) * self.gpus)
                if not math.isclose(rate, c.rate_per_gpu_hour, rel_tol=1e-9):
                    c = dataclasses.replace(c, rate_per_gpu_hour=rate)
            comps.append(c)
        kept = [(n, v) for n, v in self.weibull if n not in by]
        return self.replace(components=tuple(comps), weibull=(*kept, *((n, s) for n, (s, _) in by.items())))

    def weibull_text(self, *, short: bool = False) -> str:
        """The node lives in words: "" without, else "Faulty GPU shape 0.7, scale 27.3 years (mean 34.6 years) per
        node"; ``short``: "Faulty GPU 0.7, 27.3 years", for a table's cell."""
        comps = {c.name: c for c in self.components}
        parts = []
        for name, shape in self.weibull:
            c = comps.get(name)
            if c is None:
                continue
            scale = duration_hours(self.weibull_scale_hours(c))
            if short:
                parts.append(f"{name} {number(shape)}, {scale}")
            else:
                mean = duration_hours(self.weibull_mean_life_hours(c))
                parts.append(f"{name} shape {number(shape)}, scale {scale} (mean {mean}) per node")
        return "; ".join(parts)

    @property
    def fast_tier_on(self) -> bool:
        """Whether the in-memory (fast) checkpoint tier is on."""
        return self.tiers is not None and self.tiers.fast_enabled

    @property
    def uses_failing_checkpoints(self) -> bool:
        """Whether a checkpoint can fail: a save at a chance above 0, or a fast-tier restore (the fast tier on)."""
        return self.save_fail_p > 0.0 or (self.restore_fail_p > 0.0 and self.fast_tier_on)

    def failing_checkpoints_text(self, *, short: bool = False) -> str:
        """The failing-checkpoint inputs in words: "off", or "saves fail 2%, fast restores fail 5%" (``short``, under
        a heading that says they fail: "saves 2%, fast restores 5%")."""
        fail = "" if short else " fail"
        parts = []
        if self.save_fail_p > 0.0:
            parts.append(f"saves{fail} {100.0 * self.save_fail_p:.3g}%")
        if self.restore_fail_p > 0.0:
            tail = "" if self.fast_tier_on else (" (unused)" if short else " (no fast tier: unused)")
            parts.append(f"fast restores{fail} {100.0 * self.restore_fail_p:.3g}%{tail}")
        return ", ".join(parts) if parts else "off"

    @property
    def uses_sdc(self) -> bool:
        """Whether silent data corruption is found late (a detection delay above 0; docs/model.md, "Silent data
        corruption")."""
        return self.sdc_detect_hours > 0.0

    @property
    def sdc_component(self) -> Component | None:
        """The component whose failures are silent data corruptions (named :data:`SDC_NAME`, any case), or None."""
        return next((c for c in self.components if c.name.casefold() == SDC_NAME.casefold()), None)

    def sdc_kept_for(self, share: float, persistent_min: float, fast_min: float | None = None) -> int:
        """The fewest persistent checkpoints to keep so that at most ``share`` of the corruptions found late find no
        clean one (:meth:`sdc_unkept_share` at or below it); 0 when corruption is found at once."""
        if not self.uses_sdc:
            return 0
        gap = self.save_gap_hours(persistent_min, fast_min)
        d = self.sdc_detect_hours
        first = (d / gap) * -math.expm1(-gap / d)  # (the share with one kept)
        if first <= share:
            return 1
        return 1 + math.ceil((d / gap) * math.log(first / share) * (1.0 - 1e-12))

    def retained_text(self) -> str:
        """The persistent checkpoints kept, in words: "every persistent checkpoint kept", or "the last 4 persistent
        checkpoints kept"."""
        k = self.retained_checkpoints
        if k <= 0:
            return "every persistent checkpoint kept"
        return "only the last persistent checkpoint kept" if k == 1 else f"the last {k:,} persistent checkpoints kept"

    def sdc_text(self, *, short: bool = False) -> str:
        """The silent-corruption inputs in words: "found at once", or "found 24 h late on average, every checkpoint
        kept"; ``short``: "24 h late, keep 4"."""
        if not self.uses_sdc:
            return "found at once"
        late = duration_hours(self.sdc_detect_hours)
        if short:
            keep = "keep all" if self.retained_checkpoints <= 0 else f"keep {self.retained_checkpoints:,}"
            return f"{late} late, {keep}"
        return f"found {late} late on average, {self.retained_text()}"

    def sdc_interval_caveat(self) -> str | None:
        """Why the optimal intervals mislead here, in words, or None: with silent corruption found late and finitely
        many checkpoints kept, a longer interval keeps a clean one for longer, which no optimum counts."""
        if not (self.uses_sdc and self.retained_checkpoints > 0):
            return None
        return (
            "the optimal intervals know nothing of silent corruption found late: with "
            f"{self.retained_checkpoints:,} checkpoints kept a longer interval keeps a clean one for longer (and a "
            "faster write or an in-memory tier, which shorten the optimum, fill them sooner)"
        )

    def save_gap_hours(self, persistent_min: float, fast_min: float | None = None) -> float:
        """Running hours between two persistent saves at this persistent interval (docs/model.md 2.1): a persistent
        point's cycle (its snapshots' compute and stalls, and its own stall), times the points an upload spans (one
        at a time, it starts at every ``q``-th point). ``fast_min``: the fast interval in use (None: the scenario's,
        or where it is 'optimal' one snapshot a point)."""
        t = self.tiers
        if t is not None and t.fast_enabled:
            if fast_min is None:
                given = t.fast_interval_min
                fast_min = float(given) if not isinstance(given, str) else persistent_min
            k = max(1, round(persistent_min / fast_min))
            cycle = persistent_min / 60.0 + k * t.fast_stall_s / 3600.0 + self.write_s / 3600.0
        else:
            cycle = persistent_min / 60.0 + self.write_s / 3600.0
        upload = t.persistent_upload_min / 60.0 if t is not None else 0.0
        q = max(1, math.ceil(upload / cycle * (1.0 - 1e-12))) if upload > 0 and cycle > 0 else 1
        return q * cycle

    def sdc_unkept_share(self, persistent_min: float, fast_min: float | None = None) -> float:
        """About what share of the corruptions found late find no clean checkpoint kept: those found after
        ``K = retained_checkpoints`` persistent saves or more, ``P(D > (K - 1 + U) gap) = exp(-(K - 1) gap / D) (D /
        gap) (1 - exp(-gap / D))`` (``D`` the mean delay, ``U`` uniform) with ``gap`` the time between two saves
        (:meth:`save_gap_hours`) were the job never down: exact for one tier without other interruptions, an upper
        bound where the job is down for part of the delay (it saves less often then); 0 with every checkpoint kept,
        or corruption found at once."""
        if not self.uses_sdc or self.retained_checkpoints <= 0:
            return 0.0
        gap = self.save_gap_hours(persistent_min, fast_min)
        d, k = self.sdc_detect_hours, self.retained_checkpoints
        # (K or more saves after the corruption's start, from a uniform place in the cadence: D > (K - 1 + U) gap)
        return math.exp(-(k - 1) * gap / d) * (d / gap) * -math.expm1(-gap / d)

    @property
    def uses_bad(self) -> bool:
        """Whether some nodes are bad (a share above 0 that fails more often than the rest: docs/model.md, "Bad
        nodes")."""
        return self.bad_share > 0.0

    def bad_text(self, *, short: bool = False) -> str:
        """The bad-node inputs in words: "none", or "15% of nodes bad at the start, failing 5x as often, the right
        node pulled 90% of the time, repairs leaving 24% bad"; ``short``: "15% bad, 5x, 90% right, 24% repairs
        fail"."""
        if not self.uses_bad:
            return "none"
        share, diag = f"{100.0 * self.bad_share:.3g}%", f"{100.0 * self.diagnosis_p:.3g}%"
        if short:
            fail = f"{100.0 * self.repair_fail_p:.3g}%"
            return f"{share} bad, {self.bad_multiplier:g}x, {diag} right, {fail} repairs fail"
        parts = [f"{share} of nodes bad at the start, failing {self.bad_multiplier:g}x as often"]
        parts.append(f"the right node pulled {diag} of the time")
        if self.repair_fail_p > 0:
            parts.append(f"repairs leaving {100.0 * self.repair_fail_p:.3g}% bad")
        return ", ".join(parts)

    @property
    def uses_slow(self) -> bool:
        """Whether nodes run slow (fail-slow episodes at a rate above 0)."""
        return self.slow_rate_per_gpu_hour > 0.0

    def slow_text(self, *, short: bool = False) -> str:
        """The fail-slow inputs in words: "off", or "2e-06 per GPU-hour (one every 30.5 h), job at 50% for 30 min
        until drained"; ``short``: "2e-06/GPU-h, 50% speed, 30 min", for a table's cell."""
        if not self.uses_slow:
            return "off"
        rate = f"{self.slow_rate_per_gpu_hour:.3g} per GPU-hour"
        speed, detect = fmt.percent(self.slow_factor, 0), duration_min(self.slow_detect_min)
        if short:
            return f"{self.slow_rate_per_gpu_hour:.3g}/GPU-h, {speed} speed, {detect}"
        return f"{rate} ({self.slow_every_text()}), job at {speed} for {detect} until drained"

    def slow_every_text(self) -> str:
        """How often a node turns slow at this size, in words: "one every 30.5 h" ("next to none" at a rate too
        small to invert)."""
        gap = 1.0 / (self.slow_rate_per_gpu_hour * max(self.gpus, 1)) if self.uses_slow else math.inf
        return f"one every {duration_hours(gap)}" if math.isfinite(gap) else "next to none"

    @property
    def recovery_min(self) -> float:
        """Time from an unplanned interruption to computing again (R = detect + restart at this size)."""
        return self.detect_min + self.restart_at_size_min

    @property
    def write_s(self) -> float:
        """The blocking checkpoint write in use, seconds: from :attr:`storage` when set, else
        ``checkpoint_write_s`` (which a storage section leaves in the file but does not use)."""
        if self.storage is None:
            return self.checkpoint_write_s
        return self.storage.write_s(self.gpus)

    def storage_warning(self, interval_min: float) -> str | None:
        """A one-line warning when storage cannot keep up with checkpoints every ``interval_min`` minutes
        (the write takes at least as long as the compute between two checkpoints); None otherwise."""
        if self.storage is None or self.write_s < interval_min * 60.0:
            return None
        st = self.storage
        return (
            f"storage cannot keep up: each checkpoint takes {duration_hours(self.write_s / 3600.0)} to write "
            f"({self.gpus:,} GPUs x {st.checkpoint_gb_per_gpu:g} GB at {st.storage_gb_s:,g} GB/s), no less than the "
            f"{duration_min(interval_min)} of compute between checkpoints"
        )

    @property
    def uses_optimal_interval(self) -> bool:
        return self.checkpoint_interval_min == OPTIMAL

    @property
    def uses_tiers(self) -> bool:
        """Whether the recovery strategy differs from today's single blocking checkpoint (the two-tier
        engine simulates it; otherwise today's engine does, and every number is today's)."""
        return self.tiers is not None and not self.tiers.is_todays

    @property
    def uses_spares(self) -> bool:
        """Whether spares or the recovery mode change the model (a finite pool, a swap time, or continue
        mode): the general engine simulates it; otherwise today's engine does, and every number is today's."""
        return self.spares is not None and not self.spares.is_todays

    @property
    def finite_pool(self) -> bool:
        """Whether the job draws replacements from a pool of a given size (spares set, ``spare_nodes`` not None);
        otherwise a failed node is replaced at once, whatever else the spares set."""
        return self.spares is not None and self.spares.spare_nodes is not None

    # -- edits ----------------------------------------------------------------
    def replace(self, **changes: Any) -> Scenario:
        """A copy with some fields changed (not validated; see :mod:`.scenario_io`)."""
        return dataclasses.replace(self, **changes)

    def simulated(self) -> Scenario:
        """What the Monte Carlo sees of the scenario: its name and its prices change no simulated number."""
        return self.replace(name="", gpu_hour_cost_usd=0.0, lever_prices=())

    def with_gpu_mtbf_hours(self, hours: float) -> Scenario:
        """Scale every component's rate by one factor so the per-GPU MTBF is ``hours``, keeping the mix."""
        if not (math.isfinite(hours) and hours > 0):
            raise ValueError(f"the GPU MTBF must be a positive number of hours (got {hours!r})")
        total = self.rate_per_gpu_hour
        if total == 0:
            raise ValueError("cannot set the GPU MTBF: every component rate is zero")
        factor = (1.0 / hours) / total
        scaled = self.scale_rates(factor)
        if all(math.isfinite(c.rate_per_gpu_hour) for c in scaled.components):
            return scaled
        # The factor overflowed (a tiny total or a tiny MTBF): scale each component's share instead.
        comps = tuple(
            dataclasses.replace(c, rate_per_gpu_hour=(c.rate_per_gpu_hour / total) / hours) for c in self.components
        )
        return self.replace(components=comps)

    def top_share(self) -> float:
        """The largest component's share of the total unplanned rate (0 when every rate is zero)."""
        total = self.rate_per_gpu_hour
        if total == 0:
            return 0.0
        return min(1.0, max(c.rate_per_gpu_hour for c in self.components) / total)

    def scale_rates(self, factor: float, category: str | None = None) -> Scenario:
        """Multiply component rates (of one category, or all) by ``factor``."""
        comps = tuple(
            dataclasses.replace(c, rate_per_gpu_hour=c.rate_per_gpu_hour * factor)
            if category is None or c.category == category
            else c
            for c in self.components
        )
        return self.replace(components=comps)

    @property
    def categories(self) -> tuple[str, ...]:
        """Categories in first-seen order."""
        return tuple(dict.fromkeys(c.category for c in self.components))


# -- spares, repairs and the recovery mode (their model in hours: :mod:`.model.spares`, docs/spares.md) --------
RecoveryMode = Literal["restart", "continue"]
#: The years a bought spare node is written off over by default: large operators depreciate servers over four to
#: six years (an input with no single source: set your own).
DEFAULT_DEPRECIATION_YEARS = 5.0
HOURS_PER_YEAR = 8766.0  # (365.25 days)
RECOVERY_MODES: tuple[str, ...] = get_args(RecoveryMode)


def _got(value: object) -> str:
    """A value in a message: a number as :func:`.fmt.number` writes it (never 309 digits), anything else quoted."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return fmt.number(value)  # (nan and inf as "nan" and "inf")
    return fmt.clean(repr(value), 40)


@dataclass(frozen=True)
class Spares:
    """Spare nodes, repairs and the recovery mode. The defaults give today's model exactly.

    ``spare_nodes`` None means unlimited (a failed node is replaced at once, for free); ``min_gpus`` None means
    no shrinking; ``repair_sigma`` None means exponential repair times, a number lognormal ones with that
    sigma (of the log) and the category's mean.
    """

    spare_nodes: int | None = None
    swap_min: float = 0.0
    #: Mean repair hours by category that override :data:`DEFAULT_REPAIR_HOURS`: (category, hours) pairs.
    repair_hours: tuple[tuple[str, float], ...] = ()
    repair_sigma: float | None = None
    min_gpus: int | None = None
    recovery_mode: str = "restart"
    #: GPUs per data-parallel replica in ``continue`` mode.
    replica_gpus: int = 1024
    #: Stall of the whole job when one replica fails in ``continue`` mode, minutes (FT-HSDP: about 3).
    continue_stall_min: float = 3.0
    #: The most replicas one failure may take out and the job still continue; more restart it.
    max_replicas_lost: int = 1
    #: What a spare node costs to buy, dollars (None: the pool is priced as GPU-hours at the price per GPU-hour).
    node_price_usd: float | None = None
    #: Years a bought node is written off over (straight line): its cost per hour is its price over them.
    depreciation_years: float = DEFAULT_DEPRECIATION_YEARS
    #: What a rented spare node costs per hour, dollars (None: none rented).
    rental_usd_per_node_hour: float | None = None

    @property
    def priced(self) -> bool:
        """Whether the pool has a price of its own (bought or rented), not the GPU-hours of today's."""
        return self.node_price_usd is not None or self.rental_usd_per_node_hour is not None

    def pool_cost_per_hour(self, gpus_per_node: int, gpu_hour_cost_usd: float) -> float:
        """What the pool costs per hour it is held: each node's share of its price over its depreciation years, plus
        its rent, where given; otherwise (today's) its GPUs at the price per GPU-hour. An unlimited pool costs
        nothing (a failed node is replaced for free)."""
        if self.spare_nodes is None:
            return 0.0
        if not self.priced:
            return self.spare_nodes * gpus_per_node * gpu_hour_cost_usd
        price = self.node_price_usd
        bought = 0.0 if price is None else price / (self.depreciation_years * HOURS_PER_YEAR)
        rented = 0.0 if self.rental_usd_per_node_hour is None else self.rental_usd_per_node_hour
        return self.spare_nodes * (bought + rented)

    def pool_basis(self) -> str:
        """How :meth:`pool_cost_per_hour` prices the pool, in words."""
        if not self.priced:
            return "its GPU-hours at the price per GPU-hour"
        parts = []
        if self.node_price_usd is not None:
            parts.append(
                f"${fmt.compact(self.node_price_usd)} a node written off over {self.depreciation_years:g} years"
            )
        if self.rental_usd_per_node_hour is not None:
            parts.append(f"${self.rental_usd_per_node_hour:,.4g} a node-hour rented")
        return " plus ".join(parts)

    @property
    def is_todays(self) -> bool:
        """Whether the model is today's: unlimited spares, no swap time, restart from a checkpoint.

        (Repair times and shrinking then change nothing: no failure ever waits for a node.)"""
        return self.spare_nodes is None and self.swap_min == 0 and self.recovery_mode == "restart"

    def replace_spares(self, spare_nodes: int | None) -> Spares:
        """A copy with another pool size (None: unlimited)."""
        return dataclasses.replace(self, spare_nodes=spare_nodes)

    def validate(self, scenario: Scenario | None = None) -> None:
        """Raise ValueError naming the first input out of range."""
        if self.spare_nodes is not None and not (0 <= self.spare_nodes <= 10_000_000):
            raise ValueError(f"spare_nodes must be a whole number from 0 to 10,000,000 (got {_got(self.spare_nodes)})")
        if not (math.isfinite(self.swap_min) and 0 <= self.swap_min <= 1e5):
            raise ValueError(f"swap_min must be from 0 to 100,000 minutes (got {_got(self.swap_min)})")
        for cat, hours in self.repair_hours:
            if not (math.isfinite(hours) and 0 <= hours <= 1e5):
                raise ValueError(f"repair hours of {cat!r} must be from 0 to 100,000 (got {_got(hours)})")
        if self.repair_sigma is not None and not (math.isfinite(self.repair_sigma) and 0 <= self.repair_sigma <= 4):
            raise ValueError(f"repair_sigma must be from 0 to 4 (got {_got(self.repair_sigma)})")
        if self.recovery_mode not in RECOVERY_MODES:
            raise ValueError(f"recovery_mode must be one of {', '.join(RECOVERY_MODES)} (got {self.recovery_mode!r})")
        if not (math.isfinite(self.continue_stall_min) and 0 <= self.continue_stall_min <= 1e4):
            raise ValueError(f"continue_stall_min must be from 0 to 10,000 (got {_got(self.continue_stall_min)})")
        if self.max_replicas_lost < 0:
            raise ValueError(f"max_replicas_lost must be >= 0 (got {_got(self.max_replicas_lost)})")
        if self.replica_gpus < 1:
            raise ValueError(f"replica_gpus must be >= 1 (got {_got(self.replica_gpus)})")
        for name, v, hi in (
            ("node_price_usd", self.node_price_usd, 1e9),
            ("rental_usd_per_node_hour", self.rental_usd_per_node_hour, 1e6),
        ):
            if v is not None and not (math.isfinite(v) and 0 <= v <= hi):
                raise ValueError(f"{name} must be from 0 to {fmt.number(hi)} dollars (got {_got(v)})")
        if not (math.isfinite(self.depreciation_years) and 0.25 <= self.depreciation_years <= 30):
            raise ValueError(f"depreciation_years must be from 0.25 to 30 (got {_got(self.depreciation_years)})")
        if scenario is None:
            return
        misfit = self.job_misfit(scenario)
        if misfit is not None:
            raise ValueError(misfit)

    def job_misfit(self, scenario: Scenario) -> str | None:
        """What of these spares does not fit the scenario's job, as "field: why" (None: all fits). The one
        check of a pool against its job: :meth:`validate` raises it, a scenario file's check names it
        ``spares.<field>``."""
        if self.min_gpus is not None and self.min_gpus < 1:
            return f"min_gpus: must be at least 1 (got {_got(self.min_gpus)})"
        if self.min_gpus is not None and self.min_gpus > scenario.gpus:
            return f"min_gpus: must not exceed the job's {scenario.gpus:,} GPUs (got {_got(self.min_gpus)})"
        if self.recovery_mode == "continue":
            if self.replica_gpus > scenario.gpus:
                return f"replica_gpus: must not exceed the job's {scenario.gpus:,} GPUs (got {_got(self.replica_gpus)})"
            if self.replica_gpus % scenario.gpus_per_node:
                return (
                    f"replica_gpus: must be a whole number of {scenario.gpus_per_node}-GPU nodes "
                    f"(got {_got(self.replica_gpus)})"
                )
        return None
