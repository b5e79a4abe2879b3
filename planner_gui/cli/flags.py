"""Flags shared by the commands: one number grammar, the scenario flags, output checks and progress.

Bad flags exit with status 2 and one line on stderr (:class:`UsageError`, or a :class:`ScenarioError`
from the scenario's validation), never a traceback.
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import os
import re
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any, TextIO

from ..core.analysis.sweep import (
    Cost,
)
from ..core.files.checks import smallest_gpu_mtbf_hours
from ..core.files.names import edited_name
from ..core.files.presets import DEFAULT_PRESET, load_preset, preset_names
from ..core.files.profile_io import load_profile
from ..core.files.scenario_io import ScenarioError, load, validate
from ..core.files.values import check_name, check_number, check_weibull, weibull_doc
from ..core.model.scenario import OPTIMAL, PLACEMENTS, Scenario, Storage, Tiers, Training
from ..core.model.specs import LIMITS
from ..core.session.inputs import parse_detect_by, parse_weibull
from ..core.theory.profiles import burn_in_profile
from ..core.util import fmt
from ..core.util.userfiles import writable_target, write_atomic
from .flag_table import Flag, add_flags, field_flags
from .numbers import UsageError, integer_arg, number_arg, parse_number, quoted
from .spares_flags import SPARES_FIELD_FLAGS, add_spares_flags, spares_flag_names, with_spares_flags

EXIT_USAGE = 2
EXIT_INTERRUPTED = 130
#: The longest error line printed (user text inside it is shortened well before this).
MAX_MESSAGE = 400
#: Print an estimate of the time up front for jobs expected to take at least this long (seconds).
ESTIMATE_AFTER_S = 3.0
#: Show progress once a job has run this long (seconds).
PROGRESS_AFTER_S = 2.0
#: Smallest interval between two updates of a progress line on a terminal (seconds).
PROGRESS_EVERY_S = 0.25


#: What argparse takes for a negative number rather than a flag: every value a numeric flag reads
#: (``-1e5``, ``-1,000``, ``-inf``), so it reaches the flag's own check ("must be ...", not "expected one argument").
_NEGATIVE = re.compile(r"^-(?:(?:\d[\d,_]*\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|inf|infinity|nan)$", re.IGNORECASE)


def shown_defaults() -> dict[str, str]:
    """What each scenario flag is when it is not given, as its help says, by the flag's destination: the default
    preset's value for a field of :data:`FLAG_FIELDS`, the recovery tiers' and the spare pool's defaults for
    :data:`TIER_FLAGS` and the spares flags (one table each, as the flags are applied)."""
    from ..core.model.spares import Spares

    sc, tiers, spares = load_preset(DEFAULT_PRESET), Tiers(), Spares()
    shown = {row.dest: getattr(sc, row.field) for row in SCENARIO_TABLE}
    shown |= {row.dest: getattr(tiers, row.field) for row in TIER_TABLE}
    shown |= {flag_dest: getattr(spares, field) for field, flag_dest in SPARES_FIELD_FLAGS.items()}
    shown["spare_nodes"] = "unlimited" if spares.spare_nodes is None else spares.spare_nodes

    def show(v: object) -> str:  # a computed default (47 planned restarts / 54 days) to 4 digits, not 16
        return f"{v:.4g}" if isinstance(v, float) and not v.is_integer() else _show_value(v)

    out = {k: show(v) for k, v in shown.items() if v is not None}
    out["seed"] = str(sc.seed)  # a seed is an identifier, not a quantity: no thousands separators
    return out


class _HelpFormatter(argparse.HelpFormatter):
    """Help that says each flag's default: a scenario flag's from :func:`shown_defaults` ("the preset's or
    file's own when one is given", as the usage's note says), any other flag's own when it has one."""

    _scenario_defaults: dict[str, str] | None = None

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = action.help or ""
        if not text or "default" in text or action.default is argparse.SUPPRESS:
            return text
        if _HelpFormatter._scenario_defaults is None:
            _HelpFormatter._scenario_defaults = shown_defaults()
        shown = _HelpFormatter._scenario_defaults.get(action.dest)
        if action.default is None and shown is not None and action.option_strings:
            return f"{text} (default: {shown})"
        if action.default not in (None, False, True, [], ()) and action.option_strings:  # (a list: none by default)
            value = action.default
            return f"{text} (default: {', '.join(map(str, value)) if isinstance(value, (list, tuple)) else value})"
        return text


class Parser(argparse.ArgumentParser):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", _HelpFormatter)
        super().__init__(*args, **kwargs)
        self._negative_number_matcher = _NEGATIVE

    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageError(message)

    def parse_args(self, args: Sequence[str] | None = None, namespace: Any = None) -> argparse.Namespace:  # type: ignore[override]
        parsed: argparse.Namespace
        parsed, extras = self.parse_known_args(args, namespace)
        if extras:  # argparse would echo them raw; a few, cleaned, are enough to say what is wrong
            shown = " ".join(f"'{fmt.clean(a, 40)}'" for a in extras[:3]) + (" ..." if len(extras) > 3 else "")
            self.error(f"unrecognized arguments: {shown}{self._suggestion(extras, parsed)}")
        return parsed

    def _suggestion(self, extras: Sequence[str], parsed: argparse.Namespace) -> str:
        """ "; did you mean --gpus?" for the first unknown flag that is close to one of the command's."""
        import difflib

        parsers = [self]
        for action in self._actions:
            if isinstance(action, argparse._SubParsersAction):
                chosen = action.choices.get(getattr(parsed, action.dest, None) or "")
                if chosen is not None:
                    parsers.append(chosen)
        known = [opt for p in parsers for a in p._actions for opt in a.option_strings if opt.startswith("--")]
        for extra in extras:
            if extra.startswith("--"):
                close = difflib.get_close_matches(extra.split("=", 1)[0], known, n=1, cutoff=0.6)
                if close:
                    return f"; did you mean {close[0]}?"
        return ""


# -- numbers ------------------------------------------------------------------------------------------
def interval_arg(text: str) -> float | str:
    if text.strip().lower() == OPTIMAL:
        return OPTIMAL
    return float(parse_number(text, "a number of minutes or 'optimal'"))


def burn_in_arg(text: str) -> tuple[float, float]:
    """``SHAPE,LIFE_DAYS``: two numbers separated by a comma (ranges are checked with the scenario)."""
    parts = text.split(",")
    if len(parts) != 2:
        raise argparse.ArgumentTypeError(
            f"must be SHAPE,LIFE_DAYS, two numbers separated by one comma, e.g. 0.7,30 (got {quoted(text)}; "
            "write a long life as 1000 or 1_000)"
        )
    shape, life = (float(parse_number(part, "a number")) for part in parts)
    return shape, life


def file_name(text: str) -> str:
    if not text:
        raise argparse.ArgumentTypeError("must be a file name (got an empty value)")
    if "\0" in text:
        raise argparse.ArgumentTypeError(f"must be a file name without NUL bytes (got {quoted(text)})")
    return text


class _StoreTyped(argparse.Action):
    """Store the value, and which of the flag's names was typed (``args.flags_typed``): an alias
    (``--persistent-interval``) is named in errors and in the edited name as typed."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:  # fmt: skip
        setattr(namespace, self.dest, values)
        typed = dict(getattr(namespace, "flags_typed", None) or {})
        typed[self.dest] = option_string
        namespace.flags_typed = typed


def _typed_flag(args: argparse.Namespace, flag: str) -> str:
    """``flag`` (its main name) as the user typed it: an alias if they typed that."""
    typed = getattr(args, "flags_typed", None) or {}
    return typed.get(flag[2:].replace("-", "_")) or flag


#: The flags that set one scalar field of the scenario each, in the order a changed scenario's name lists them.
SCENARIO_TABLE = (
    Flag("gpus", ("--gpus",), parse=integer_arg, metavar="N", help="GPUs in the job"),
    Flag(
        "gpus_per_node",
        ("--gpus-per-node",),
        parse=integer_arg,
        metavar="N",
        help="GPUs in one node, the unit a failure of scope node takes and a spare replaces (8 in an HGX H100 "
        "server, 4 in a GB200 compute tray; default: the scenario's)",
    ),
    Flag("days", ("--days",), parse=number_arg, metavar="D", help="wall-clock window, days"),
    Flag(
        "checkpoint_interval_min",
        ("--checkpoint-interval", "--persistent-interval"),
        parse=interval_arg,
        metavar="MIN|optimal",
        action=_StoreTyped,
        help="compute minutes between (persistent) checkpoints, or 'optimal' (Daly's; with the fast tier on, a "
        "whole number of fast intervals: every snapshot, or Young's for a persistent stall)",
    ),
    Flag(
        "checkpoint_write_s",
        ("--checkpoint-write", "--persistent-stall"),
        parse=number_arg,
        metavar="SEC",
        action=_StoreTyped,
        help="blocking (persistent) checkpoint write, seconds; with the fast tier on, the persistent tier's own "
        "stall at each persistent checkpoint, on top of the fast stall (0: none)",
    ),
    Flag("detect_min", ("--detect",), parse=number_arg, metavar="MIN", help="detection time, minutes"),
    Flag(
        "restart_min",
        ("--restart",),
        parse=number_arg,
        metavar="MIN",
        help="restart time (reschedule, initialise, load), minutes; with --restart-per-log2-gpus, at 16,384 GPUs",
    ),
    Flag(
        "restart_per_log2_gpus_min",
        ("--restart-per-log2-gpus",),
        parse=number_arg,
        metavar="MIN",
        help="minutes the restart grows by each time the GPU count doubles: the restart at N GPUs is --restart "
        "+ MIN x log2(N / 16,384) (never below 0), so sweeps over the GPU count move it",
    ),
    Flag(
        "planned_per_day", ("--planned-per-day",), parse=number_arg, metavar="X", help="planned interruptions per day"
    ),
    Flag(
        "slow_rate_per_gpu_hour",
        ("--slow-rate",),
        parse=number_arg,
        metavar="PER_GPU_HOUR",
        help="fail-slow nodes (stragglers) per GPU-hour: while one is slow the job runs at --slow-factor until the "
        "node is drained with a planned restart --slow-detect minutes after it turned slow",
    ),
    Flag(
        "slow_factor",
        ("--slow-factor",),
        parse=number_arg,
        metavar="F",
        help="the job's speed while a node is slow, as a share of full speed, 0-1",
    ),
    Flag(
        "slow_detect_min",
        ("--slow-detect",),
        parse=number_arg,
        metavar="MIN",
        help="minutes from a node turning slow to its drain",
    ),
    Flag(
        "save_fail_p",
        ("--save-fail-p",),
        parse=number_arg,
        metavar="P",
        help="the chance that a checkpoint save fails (a snapshot, or a persistent point's copy to storage): the "
        "checkpoint before it stands until the next save, 0-0.99 (default 0)",
    ),
    Flag(
        "restore_fail_p",
        ("--restore-fail-p",),
        parse=number_arg,
        metavar="P",
        help="the chance that a restore from the in-memory (fast) tier fails its validation: the job then restores "
        "from storage, after the fast restore's time, 0-1 (default 0)",
    ),
    Flag(
        "correlated_rate_per_day",
        ("--correlated-rate",),
        parse=number_arg,
        metavar="PER_DAY",
        help="correlated failures per day of the whole job: events (a power feed, a PDU row, a cooling loop) that "
        "take --correlated-domains failure domains at once and restore from storage (default 0: none)",
    ),
    Flag(
        "correlated_domains",
        ("--correlated-domains",),
        parse=integer_arg,
        metavar="N",
        help="failure domains one correlated event takes (default 4; never more nodes than the job's)",
    ),
    Flag(
        "correlated_repair_hours",
        ("--correlated-repair-hours",),
        parse=number_arg,
        metavar="H",
        help="mean hours until the nodes a correlated event took are back in the pool (default 8)",
    ),
    Flag(
        "nvlink_gpus",
        ("--nvlink-gpus",),
        parse=integer_arg,
        metavar="N",
        help="GPUs in one rack-scale NVLink domain, whole trays of the scenario's GPUs per node (72 on GB200 NVL72, "
        "trays of 4): a tray that fails stops its rack's part of the job; a domain failure moves the rack "
        "(default 0: none)",
    ),
    Flag(
        "rack_spare_trays",
        ("--rack-spare-trays",),
        parse=integer_arg,
        metavar="N",
        help="trays of each NVLink rack held as warm spares (2 of 18 on NVL72): a failed tray is swapped within its "
        "rack while one is free, else the rack moves to a spare rack of --spare-nodes (default 0)",
    ),
    Flag(
        "rack_move_min",
        ("--rack-move",),
        parse=number_arg,
        metavar="MIN",
        help="minutes a failure that moves its rack to a spare rack adds to the swap (the job's slice set up on "
        "another rack; default 0: a move costs the swap alone)",
    ),
    Flag(
        "sdc_detect_hours",
        ("--sdc-detect-hours",),
        parse=number_arg,
        metavar="H",
        help="mean hours from a silent data corruption's start to its detection (exponential): checkpoints taken "
        "since it started are poisoned and the job rolls back to the last clean one (default 0: found at once)",
    ),
    Flag(
        "retained_checkpoints",
        ("--retained-checkpoints",),
        parse=integer_arg,
        metavar="K",
        help="persistent checkpoints kept in storage, the last K saves: a corruption found K saves or more after it "
        "started has no clean checkpoint left and the run starts over (default 0: every one kept)",
    ),
    Flag(
        "bad_share",
        ("--bad-share",),
        parse=number_arg,
        metavar="S",
        help="share of the job's nodes and the pool's that are bad at the start (a bad batch), 0-1: a bad node "
        "fails more often until a repair fixes it (default 0: none)",
    ),
    Flag(
        "bad_multiplier",
        ("--bad-multiplier",),
        parse=number_arg,
        metavar="M",
        help="how many times as often a bad node fails, by every cause that takes a node (default 5)",
    ),
    Flag(
        "diagnosis_p",
        ("--diagnosis-p",),
        parse=number_arg,
        metavar="P",
        help="chance that a node failure pulls the node that failed; otherwise a healthy one is pulled and a bad "
        "one stays (default 1)",
    ),
    Flag(
        "repair_fail_p",
        ("--repair-fail-p",),
        parse=number_arg,
        metavar="P",
        help="chance that a bad node's repair leaves it bad; with a finite pool it comes back still bad (default 0)",
    ),
    Flag("trials", ("--trials",), parse=integer_arg, metavar="K", help="Monte Carlo trials", named=False),
    Flag("seed", ("--seed",), parse=integer_arg, metavar="S", help="random seed", named=False),
)
#: Scenario field set by each override flag, so range errors name the flag the user typed.
FLAG_FIELDS = field_flags(SCENARIO_TABLE)
#: Fields whose flags change what a scenario describes, and so its name.
_NAMED_FIELDS = tuple(row.field for row in SCENARIO_TABLE if row.named)


#: Why each bad-node input changes nothing without bad nodes.
BAD_WHY = {
    "bad_multiplier": "it is how much more often a bad node fails",
    "diagnosis_p": "pulling a healthy node instead of a good one that failed changes no node's state",
    "repair_fail_p": "a good node's repair leaves it good",
}


#: The training section's flags (the work to do, for the time to train and its cost; ``run`` reports them).
TRAINING_TABLE = (
    Flag(
        "train_flops",
        ("--train-flops",),
        parse=number_arg,
        metavar="F",
        help="training compute, FLOPs (with --peak-tflops and --mfu, each Llama 3's unless given)",
    ),
    Flag(
        "peak_tflops",
        ("--peak-tflops",),
        parse=number_arg,
        metavar="T",
        help="peak dense TFLOP/s of one GPU (alone, it times Llama 3's training compute)",
    ),
    Flag(
        "mfu",
        ("--mfu",),
        parse=number_arg,
        metavar="M",
        help="model FLOPs utilisation, 0.01 to 1 (alone, it times Llama 3's training compute)",
    ),
    Flag(
        "compute_gpu_hours",
        ("--compute-gpu-hours",),
        parse=number_arg,
        metavar="H",
        help="GPU-hours of pure compute, instead of FLOPs",
    ),
)
TRAINING_FLAGS = field_flags(TRAINING_TABLE)
#: The storage section's flags.
STORAGE_TABLE = (
    Flag(
        "checkpoint_gb_per_gpu",
        ("--checkpoint-gb-per-gpu",),
        parse=number_arg,
        metavar="G",
        help="checkpoint size per GPU, GB; with --storage-gbps it sets the write (GPUs x G / B)",
    ),
    Flag(
        "storage_gb_s",
        ("--storage-gbps", "--storage-gb-s"),
        parse=number_arg,
        metavar="B",
        help="storage write bandwidth, GB/s (all GPUs; the file's storage.storage_gb_s)",
    ),
)
STORAGE_FLAGS = field_flags(STORAGE_TABLE)


def add_training_flags(p: argparse.ArgumentParser) -> None:
    """The flags that give the work to do, for the time to train and its cost (``run`` reports them)."""
    add_flags(p, TRAINING_TABLE)


def add_scenario_flags(p: argparse.ArgumentParser) -> None:
    p.epilog = (
        f"A scenario flag not given keeps the value of the scenario it starts from: --preset's or --scenario's, "
        f"else the default preset's ({DEFAULT_PRESET}), whose values the defaults above are."
    )
    src = p.add_mutually_exclusive_group()
    src.add_argument("--preset", metavar="NAME", help=f"start from a preset ({', '.join(preset_names())})")
    src.add_argument("--scenario", metavar="FILE", type=file_name, help="start from a scenario JSON file")
    p.add_argument(
        "--name",
        metavar="TEXT",
        help="the scenario's name (default: the preset's or file's, marked 'edited' when flags change it)",
    )
    add_flags(p, (row for row in SCENARIO_TABLE if row.named))
    p.add_argument(
        "--detect-by",
        action="append",
        metavar="COMPONENT=MIN",
        help="minutes to notice a failure of this component, or of every component of this category (repeatable; "
        "e.g. 'NCCL Watchdog Timeouts=15' for a watchdog's timeout, GPU=0.1 for an error the driver sees); the "
        "others take --detect",
    )
    p.add_argument(
        "--gpu-mtbf-hours",
        type=number_arg,
        metavar="H",
        help="scale all component rates so one GPU's MTBF is H hours (mix kept)",
    )
    add_flags(p, STORAGE_TABLE)
    add_flags(p, (row for row in SCENARIO_TABLE if not row.named))
    add_rate_flags(p)
    add_training_flags(p)
    add_tier_flags(p)

    add_spares_flags(p)


#: The tiers section's flags. A ``--fast-*`` flag turns the fast tier on.
TIER_TABLE = (
    Flag(
        "fast_interval_min",
        ("--fast-interval",),
        parse=interval_arg,
        metavar="MIN|optimal",
        help="compute minutes between in-memory snapshots, or 'optimal'; any --fast-* flag turns the fast tier on",
    ),
    Flag(
        "fast_stall_s",
        ("--fast-stall",),
        parse=number_arg,
        metavar="SEC",
        help="training stall per in-memory snapshot, s",
    ),
    Flag(
        "fast_restore_min",
        ("--fast-restore",),
        parse=number_arg,
        metavar="MIN",
        help="restore from host memory, minutes",
    ),
    Flag(
        "fast_replicas",
        ("--fast-replicas",),
        parse=integer_arg,
        metavar="N",
        help="peer nodes holding each node's snapshot",
    ),
    Flag(
        "fast_placement",
        ("--fast-placement",),
        choices=PLACEMENTS,
        help="replicas in the node's own failure domain or only in others",
    ),
    Flag(
        "nodes_per_domain",
        ("--nodes-per-domain",),
        parse=integer_arg,
        metavar="N",
        help="nodes lost together by a domain failure",
    ),
    Flag(
        "persistent_upload_min",
        ("--persistent-upload",),
        parse=number_arg,
        metavar="MIN",
        help="background upload of each checkpoint to storage, minutes; it counts only once finished",
    ),
    Flag(
        "persistent_restore_min",
        ("--persistent-restore",),
        parse=number_arg,
        metavar="MIN",
        help="restore from persistent storage, minutes",
    ),
)
TIER_FLAGS = field_flags(TIER_TABLE)


def add_tier_flags(p: argparse.ArgumentParser) -> None:
    """The recovery strategy: the fast (in-memory) tier, failure domains, the persistent tier's upload and
    restore (docs/tiers.md)."""
    g = p.add_argument_group("recovery tiers (docs/tiers.md)")
    add_flags(g, TIER_TABLE)
    g.add_argument(
        "--no-fast-tier",
        action="store_true",
        default=None,
        help="turn the fast (in-memory) tier off: every failure restores from the persistent tier",
    )


#: The flags of rates that vary (``run``, ``sweep``, ``report``; ``sensitivity`` refuses them).
RATE_FLAGS = ("--rate-uncertainty", "--rate-profile", "--burn-in", "--weibull", "--new-cluster")


def add_rate_flags(p: argparse.ArgumentParser) -> None:
    """Rate uncertainty, and rates that change over the run (a profile or a burn-in)."""
    p.add_argument(
        "--rate-uncertainty",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="draw each trial's failure rates from their posteriors given their evidence (Llama 3's causes: "
        "their Table 5 counts); the percentiles then include it",
    )
    p.add_argument(
        "--weibull",
        action="append",
        metavar="COMPONENT=SHAPE,SCALE_HOURS",
        help="node lives of this component that are Weibull, not exponential (repeatable): each of the job's nodes "
        "fails of it after a life of SHAPE (below 1 infant mortality, above 1 wear-out) and SCALE_HOURS (the "
        "characteristic life), renewed at each failure; the component's rate becomes the lives' long-run rate "
        "(COMPONENT=SHAPE keeps the rate); with --new-cluster every node is new at the start",
    )
    p.add_argument(
        "--new-cluster",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="a new cluster: every node new and none in repair at the window's start, the job fresh (else the "
        "steady state of a long run)",
    )
    varying = p.add_mutually_exclusive_group()
    varying.add_argument(
        "--rate-profile",
        metavar="FILE",
        type=file_name,
        help="multipliers of the failure rates over the run: a CSV of day,multiplier lines or JSON pairs",
    )
    varying.add_argument(
        "--burn-in",
        metavar="SHAPE,LIFE_DAYS",
        type=burn_in_arg,
        help="a new cluster's burn-in: Weibull node lives of SHAPE (below 1) and characteristic life in days",
    )


def _naming_flags(exc: ScenarioError, flags: dict[str, str]) -> ScenarioError:
    """``exc`` with its leading field replaced by the flag that set it, when a flag did."""
    field, _, rest = str(exc).partition(": ")
    return ScenarioError(f"{flags[field]}: {rest}") if field in flags else exc


def _show_value(v: object) -> str:
    """A flag's value as the user could type it again: ``100,000``, ``0.354``, ``optimal``."""
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return str(v)
    if float(v).is_integer() and abs(v) < 1e15:
        return f"{int(v):,}"
    return repr(float(v))


def _with_mtbf(sc: Scenario, hours: float) -> Scenario:
    """``sc`` with its rates scaled to a per-GPU MTBF of ``hours``, or a ScenarioError naming the flag."""
    if hours <= 0:
        raise ScenarioError(f"--gpu-mtbf-hours: must be more than 0 (got {fmt.number(hours)})")
    least = smallest_gpu_mtbf_hours(sc)  # from the mix alone: never overflows, whatever ``hours`` is
    max_rate = LIMITS["rate_per_gpu_hour"][1]
    scaled = None
    if hours >= least:
        try:
            scaled = sc.with_gpu_mtbf_hours(hours)
        except ValueError as exc:
            raise ScenarioError(f"--gpu-mtbf-hours: {fmt.clean(str(exc), 120)}") from None
    if scaled is None or not all(c.rate_per_gpu_hour <= max_rate for c in scaled.components):
        # The most frequent component would fail more than once an hour per GPU. Name the smallest value
        # allowed, rounded up to three significant digits (so that the value named is itself accepted).
        step = 10.0 ** (math.floor(math.log10(least)) - 2)
        shown = math.ceil(least / step) * step
        if shown < least * (1 + 1e-12):
            shown += step
        raise ScenarioError(
            f"--gpu-mtbf-hours: must be at least {shown:.3g} hours with this component mix (got {hours:g})"
        )
    return scaled


def scenario_from_args(args: argparse.Namespace, check: Callable[[Scenario], Scenario] | None = None) -> Scenario:
    """The base scenario (preset, file or default) with the flags' overrides, validated (by ``check`` when given,
    e.g. :func:`..core.analysis.strategies.comparable`; an error it raises names the flags as any other).

    When the flags change what the scenario describes, its name says so (see
    :func:`.names.edited_name`), unless ``--name`` sets it.
    """
    if getattr(args, "scenario", None) is not None:
        sc = load(args.scenario)
    elif getattr(args, "preset", None) is not None:
        try:
            sc = load_preset(args.preset)
        except ScenarioError as exc:
            raise _naming_flags(exc, {"preset": "--preset"}) from None
    else:
        sc = load_preset(DEFAULT_PRESET)
    base = sc
    overrides = _given(args, SCENARIO_TABLE)
    sc = sc.replace(**overrides)
    for field in ("rack_spare_trays", "rack_move_min"):  # (typed for racks the scenario does not have: say so)
        if overrides.get(field) and not sc.uses_nvlink:
            raise ScenarioError(
                f"{_typed_flag(args, FLAG_FIELDS[field])}: changes nothing without NVLink racks; give --nvlink-gpus N "
                "(72 on GB200 NVL72, with --gpus-per-node 4)"
            )
    if overrides.get("retained_checkpoints") and not sc.uses_sdc:
        raise ScenarioError(
            f"{_typed_flag(args, FLAG_FIELDS['retained_checkpoints'])}: changes nothing while corruption is found at "
            "once (a rollback needs only the last checkpoint); give --sdc-detect-hours H"
        )
    # (a bad-node input set away from its default without bad nodes changes nothing)
    bad_inputs = [f for f in BAD_WHY if f in overrides and overrides[f] != getattr(Scenario(), f)]
    if bad_inputs and not sc.uses_bad:
        raise ScenarioError(
            f"{_typed_flag(args, FLAG_FIELDS[bad_inputs[0]])}: changes nothing without bad nodes "
            f"({BAD_WHY[bad_inputs[0]]}); give --bad-share S above 0"
        )
    edits = [
        f"{_typed_flag(args, FLAG_FIELDS[f])} {_show_value(overrides[f])}"
        for f in _NAMED_FIELDS
        if f in overrides and overrides[f] != getattr(base, f)
    ]
    if args.gpu_mtbf_hours is not None:
        sc = _with_mtbf(sc, args.gpu_mtbf_hours)
        if sc.components != base.components:
            edits.append(f"--gpu-mtbf-hours {_show_value(args.gpu_mtbf_hours)}")
    sc, training_edits = _with_training(sc, _given(args, TRAINING_TABLE))
    write_flag = _typed_flag(args, "--checkpoint-write") if args.checkpoint_write is not None else None
    sc, storage_edits = _with_storage(sc, _given(args, STORAGE_TABLE), write_flag)
    sc, detect_edits = _with_detect_by(sc, args)
    edits += detect_edits
    sc, rate_edits = _with_rates(sc, args)
    sc, tier_edits = _with_tiers(sc, args)

    sc, spares_edits = with_spares_flags(sc, args)
    edits += training_edits + storage_edits + rate_edits + tier_edits + spares_edits
    if args.name is not None:
        try:
            sc = sc.replace(name=check_name(args.name, "--name"))
        except ScenarioError as exc:
            raise ScenarioError(fmt.clean(str(exc), MAX_MESSAGE)) from None
    elif edits:
        sc = sc.replace(name=edited_name(sc.name, " ".join(edits)))
    named = {f: _typed_flag(args, FLAG_FIELDS[f]) for f in overrides}
    named |= {f"training.{f}": TRAINING_FLAGS[f] for f in _given(args, TRAINING_TABLE)}
    named |= {f"storage.{f}": STORAGE_FLAGS[f] for f in _given(args, STORAGE_TABLE)}
    named |= {f"tiers.{f}": TIER_FLAGS[f] for f in _given(args, TIER_TABLE)}

    named |= spares_flag_names(args)
    try:
        return (check or validate)(sc)
    except ScenarioError as exc:
        raise _naming_flags(exc, named) from None


def _entries(items: list[str] | None, flag: str, parse: Callable[[str], tuple[Any, ...]], form: str) -> list[Any]:
    """The entries of a repeatable flag of ``NAME=...; NAME=...`` (``--detect-by``, ``--weibull``), each item read
    by ``parse`` (ValueError in words), every name once: refused in one line naming the flag."""
    out: list[Any] = []
    for item in items or []:
        try:
            entries = parse(str(item))
        except ValueError as exc:
            raise ScenarioError(f"{flag}: {exc}") from None
        if not entries:
            raise ScenarioError(f"{flag}: give {form} (got {quoted(item)})")
        for entry in entries:
            if any(entry[0] == e[0] for e in out):
                raise ScenarioError(f"{flag} {fmt.clean(entry[0], 40)}: given twice (each name once)")
            out.append(entry)
    return out


def _with_detect_by(sc: Scenario, args: argparse.Namespace) -> tuple[Scenario, list[str]]:
    """``sc`` with each ``--detect-by NAME=MIN[; NAME=MIN ...]`` added to (or replacing the same name's in) its
    detection by cause, checked here so that an error names the flag as typed. A name given twice is refused."""
    given = {
        name: minutes
        for name, minutes in _entries(
            getattr(args, "detect_by", None),
            "--detect-by",
            parse_detect_by,
            "COMPONENT=MIN, e.g. 'NCCL Watchdog Timeouts=15'",
        )
    }
    if not given:
        return sc, []
    new = sc.replace(detect_by=tuple({**dict(sc.detect_by), **given}.items()))
    try:
        validate(new)
    except ScenarioError as exc:
        field, _, rest = str(exc).partition(": ")
        if field.startswith("detect_by"):
            raise ScenarioError(f"--detect-by {field.partition('.')[2]}: {rest}".replace(" : ", ": ")) from None
    return new, [f"--detect-by {fmt.clean(n, 40)}={_show_value(v)}" for n, v in given.items()]


def _with_rates(sc: Scenario, args: argparse.Namespace) -> tuple[Scenario, list[str]]:
    """``sc`` with the rate flags applied (after ``--days``: a burn-in covers the window), and their edits."""
    uncertainty = getattr(args, "rate_uncertainty", None)
    profile_file, burn_in = getattr(args, "rate_profile", None), getattr(args, "burn_in", None)
    edits = []
    if uncertainty is not None and uncertainty != sc.rate_uncertainty:
        sc = sc.replace(rate_uncertainty=uncertainty)
        edits.append("--rate-uncertainty" if uncertainty else "--no-rate-uncertainty")
    if profile_file is not None:
        try:
            sc = sc.replace(rate_profile=load_profile(profile_file), new_cluster=False)
        except ScenarioError as exc:
            raise ScenarioError(f"--rate-profile: {exc}") from None
        edits.append(f"--rate-profile {os.path.basename(profile_file)}")
    if burn_in is not None:
        shape, life = burn_in
        try:
            shape = float(check_number("burn_in_shape", shape))
            life = float(check_number("burn_in_life_days", life))
        except ScenarioError as exc:
            field, _, rest = str(exc).partition(": ")
            what = "the shape" if field == "burn_in_shape" else "the characteristic life (days)"
            raise UsageError(f"--burn-in: {what} {rest}") from None
        profile = burn_in_profile(shape, life, sc.days)
        top, most = max(m for _, m in profile), LIMITS["multiplier"][1]
        if top > most:
            raise UsageError(
                f"--burn-in: a shape of {shape:g} and a life of {life:g} days make the rate {top:.3g} times the "
                f"burnt-in rate at first, over the limit of {most:,g}; use a larger shape or a shorter life"
            )
        sc = sc.replace(rate_profile=profile, new_cluster=True)  # a burn-in is a new cluster (docs/model.md)
        edits.append(f"--burn-in {shape:g},{life:g}")
    new_cluster = getattr(args, "new_cluster", None)
    if new_cluster is not None and new_cluster != sc.new_cluster:
        sc = sc.replace(new_cluster=new_cluster)
        edits.append("--new-cluster" if new_cluster else "--no-new-cluster")
    sc, lives_edits = _with_weibull(sc, args)
    return sc, edits + lives_edits


def _with_weibull(sc: Scenario, args: argparse.Namespace) -> tuple[Scenario, list[str]]:
    """``sc`` with each ``--weibull COMPONENT=SHAPE[,SCALE_HOURS]`` (after the size and rate flags: the scale sets
    the component's rate at this size), checked here so that an error names the flag. A name given twice is
    refused."""
    given = {
        name: (shape, scale)
        for name, shape, scale in _entries(
            getattr(args, "weibull", None),
            "--weibull",
            parse_weibull,
            "COMPONENT=SHAPE,SCALE_HOURS, e.g. 'Faulty GPU=0.7,200000'",
        )
    }
    if not given:
        return sc, []
    scaled = next((n for n, (_, s) in given.items() if s is not None), None)
    if scaled is not None and getattr(args, "gpu_mtbf_hours", None) is not None:
        raise UsageError(
            f"--weibull {fmt.clean(scaled, 40)}: a scale sets that component's rate, which --gpu-mtbf-hours sets too; "
            "give the shape alone (COMPONENT=SHAPE keeps the rate) or drop --gpu-mtbf-hours"
        )
    try:
        check_weibull(weibull_doc(tuple((n, v, s) for n, (v, s) in given.items())), sc.components)
    except ScenarioError as exc:
        field, _, rest = str(exc).partition(": ")
        raise ScenarioError(f"--weibull {field.partition('.')[2]}: {rest}".replace(" : ", ": ")) from None
    new = sc.with_weibull(tuple((n, v, scale) for n, (v, scale) in given.items()))
    shown = [
        f"--weibull {fmt.clean(n, 40)}={_show_value(v)}" + ("" if s is None else f",{_show_value(s)}")
        for n, (v, s) in given.items()
    ]
    return new, shown


def _with_tiers(sc: Scenario, args: argparse.Namespace) -> tuple[Scenario, list[str]]:
    """``sc`` with the tier flags applied, and their edits. A ``--fast-*`` flag turns the fast tier on;
    ``--no-fast-tier`` turns it off and refuses them."""
    given = _given(args, TIER_TABLE)
    off = bool(getattr(args, "no_fast_tier", None))
    if not given and not off:
        return sc, []
    fast = [f for f in given if f.startswith("fast_")]
    if off and fast:
        raise UsageError(f"{TIER_FLAGS[fast[0]]}: sets the fast tier, which --no-fast-tier turns off; give one")
    before = sc.tiers if sc.tiers is not None else Tiers()
    changes: dict[str, object] = dict(given)
    if fast:
        changes["fast_enabled"] = True
    if off:
        changes["fast_enabled"] = False
    tiers = dataclasses.replace(before, **changes)  # type: ignore[arg-type]
    edits = _edits(TIER_FLAGS, given, sc.tiers)
    if off and before.fast_enabled:  # (a --fast-* flag that turns it on is in the edits itself)
        edits.insert(0, "--no-fast-tier")
    return sc.replace(tiers=tiers), edits


def _given(args: argparse.Namespace, table: Sequence[Flag]) -> dict[str, Any]:
    """The fields of ``table`` whose flag was given, and their values (commands without those flags give none)."""
    values = {row.field: getattr(args, row.dest, None) for row in table}
    return {f: v for f, v in values.items() if v is not None}


def _edits(flags: dict[str, str], given: dict[str, float], before: object) -> list[str]:
    """The name's description of the flags that changed a section (all of them when it was absent)."""
    return [f"{flags[f]} {_show_value(v)}" for f, v in given.items() if before is None or getattr(before, f) != v]


def _with_training(sc: Scenario, given: dict[str, float]) -> tuple[Scenario, list[str]]:
    """``sc`` with the training flags applied, and their edits; a section they start from is Llama 3's
    (:class:`.scenario.Training`'s defaults)."""
    if not given:
        return sc, []
    if "train_flops" in given and "compute_gpu_hours" in given:
        raise UsageError("--compute-gpu-hours: give it or --train-flops (with --peak-tflops and --mfu), not both")
    t = dataclasses.replace(sc.training if sc.training is not None else Training(), **given)
    if "train_flops" in given:
        t = dataclasses.replace(t, compute_gpu_hours=None)
    if "compute_gpu_hours" in given:
        t = dataclasses.replace(t, train_flops=None)
    if t.train_flops is None:  # peak and MFU would change nothing: say so rather than ignore them
        for f in ("peak_tflops", "mfu"):
            if f in given:
                raise UsageError(
                    f"{TRAINING_FLAGS[f]}: applies to --train-flops; here the compute is given in GPU-hours "
                    "(--compute-gpu-hours)"
                )
    return sc.replace(training=t), _edits(TRAINING_FLAGS, given, sc.training)


def _with_storage(sc: Scenario, given: dict[str, float], write_flag: str | None) -> tuple[Scenario, list[str]]:
    """``sc`` with the storage flags applied, and their edits. A new storage section needs both flags; a
    blocking write typed with ``write_flag`` (``--checkpoint-write`` or its alias, None if not given) would be
    ignored beside one, so it is refused."""
    if given and sc.storage is None and len(given) < len(STORAGE_FLAGS):
        have, need = (STORAGE_FLAGS[f] for f in sorted(STORAGE_FLAGS, key=lambda f: f not in given))
        raise UsageError(f"{need}: needed with {have} (the write takes GPUs x checkpoint size / bandwidth)")
    new = sc
    if given:
        base = dataclasses.asdict(sc.storage) if sc.storage is not None else {}
        new = sc.replace(storage=Storage(**(base | given)))
    if new.storage is not None and write_flag:
        raise UsageError(
            f"{write_flag}: this scenario's write comes from its storage (GPUs x checkpoint size / "
            "bandwidth); change --checkpoint-gb-per-gpu or --storage-gbps instead"
        )
    return new, _edits(STORAGE_FLAGS, given, sc.storage)


def about(seconds: float) -> str:
    """``about 35 s``, ``about 4 min``."""
    if seconds < 10:
        return f"about {max(1, round(seconds))} s"
    if seconds < 90:
        return f"about {round(seconds / 5) * 5} s"
    return f"about {round(seconds / 60)} min"


class Progress:
    """Says how long a job should take, then how far it is, on stderr.

    On a terminal one line is rewritten in place (``\\r``) a few times a second; elsewhere (a log, a
    pipe) at most three plain lines are written, at 25%, 50% and 75%. Nothing is shown for jobs that
    finish within a few seconds.
    """

    def __init__(self, cost: Cost, what: str, stream: TextIO | None = None) -> None:
        self.stream = stream if stream is not None else sys.stderr
        try:
            self.tty = bool(self.stream.isatty())
        except (AttributeError, ValueError, OSError):
            self.tty = False
        self.cost, self.what = cost, what
        self.t0 = time.monotonic()
        self.last = 0.0
        self.width = 0  # characters of the progress line on the terminal, to clear it
        self.next_mark = 0.25

    def _write(self, text: str) -> None:
        try:
            self.stream.write(text)
            self.stream.flush()
        except (OSError, ValueError):
            pass

    def __enter__(self) -> Progress:
        if self.cost.seconds >= ESTIMATE_AFTER_S:
            self._write(f"planner-gui: {self.what}: {about(self.cost.seconds)} on a 2-core machine (Ctrl-C stops it)\n")
        self.t0 = time.monotonic()
        return self

    def __call__(self, fraction: float) -> None:
        now = time.monotonic()
        elapsed = now - self.t0
        if elapsed < PROGRESS_AFTER_S or not 0.0 <= fraction < 1.0:
            return
        if self.tty:
            if now - self.last < PROGRESS_EVERY_S:
                return
            self.last = now
            left = f", about {about(elapsed * (1 - fraction) / fraction)[6:]} left" if fraction >= 0.05 else ""
            line = f"planner-gui: {fraction:4.0%} done after {elapsed:.0f} s{left}"
            self._write("\r" + line.ljust(self.width))
            self.width = len(line)
        elif fraction >= self.next_mark:
            while self.next_mark <= fraction:
                self.next_mark += 0.25
            self._write(f"planner-gui: {fraction:.0%} done after {elapsed:.0f} s\n")

    def __exit__(self, *exc: object) -> None:
        if self.width:  # leave the terminal line empty for what follows
            self._write("\r" + " " * self.width + "\r")
            self.width = 0


# -- commands -------------------------------------------------------------------------------------------


def write_output(path: str | None, text: str, what: str = "the output") -> None:
    """Write a command's output: atomically to ``path`` (one line on failure; on success one line on stderr
    says where ``what`` went), or to standard output."""
    if path is None:
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    try:
        write_atomic(path, text)
    except OSError as exc:
        raise ScenarioError(
            f"{fmt.clean(path, 120)}: cannot write ({fmt.clean(exc.strerror or str(exc), 160)})"
        ) from None
    print(f"planner-gui: wrote {what} to {fmt.clean(path, 200)}", file=sys.stderr)


def check_output(path: str, flag: str) -> None:
    """Refuse an output file that cannot be written, before any time is spent computing."""
    try:
        writable_target(path)
    except OSError as exc:
        raise ScenarioError(
            f"{flag}: {fmt.clean(path, 120)}: cannot write ({fmt.clean(exc.strerror or str(exc), 160)})"
        ) from None
