"""Spares flags for ``run``, ``sweep`` and every command that takes a scenario (``--spare-nodes``, ``--swap``,
``--repair-hours``, ...): the flags, the spares they give and the messages that name them."""

from __future__ import annotations

import argparse
from typing import Any

from ..core.analysis.sizing import check_spares_fit
from ..core.model.scenario import CORRELATED_NAME, Scenario
from ..core.model.spares import RECOVERY_MODES, Spares, node_categories
from ..core.util import fmt
from .flag_table import Flag, add_flags
from .numbers import UsageError, integer_arg, number_arg

__all__ = [
    "SPARES_FIELD_FLAGS",
    "SPARES_FLAGS",
    "add_spares_flags",
    "spares_flag_names",
    "spares_from_args",
    "uses_spares",
    "with_spares_flags",
]


def _spare_nodes_arg(text: str) -> int | str:
    if text.strip().lower() == "unlimited":
        return "unlimited"
    return integer_arg(text)


def _repair_arg(text: str) -> tuple[str, float]:
    cat, sep, hours = text.partition("=")
    if not sep or not cat.strip():
        raise argparse.ArgumentTypeError(f"must be CATEGORY=HOURS, as in GPU=48 (got '{fmt.clean(text, 60)}')")
    return cat.strip(), number_arg(hours)


#: The spares flags, each with the :class:`~planner_gui.core.model.spares.Spares` field it sets.
SPARES_TABLE = (
    Flag(
        "spare_nodes",
        ("--spare-nodes",),
        parse=_spare_nodes_arg,
        metavar="N|unlimited",
        help="hot spare nodes (default unlimited: a failed node is replaced at once, as without this flag)",
    ),
    Flag(
        "swap_min", ("--swap",), parse=number_arg, metavar="MIN", help="minutes added to a restart that swaps in spares"
    ),
    Flag(
        "repair_hours",
        ("--repair-hours",),
        parse=_repair_arg,
        metavar="CATEGORY=H",
        action="append",
        help="mean hours a node lost to a category is in repair (repeatable; defaults: GPU=48, Host=24, Network=4, "
        "'Unplanned Maintenance'=8)",
    ),
    Flag(
        "repair_sigma",
        ("--repair-sigma",),
        parse=number_arg,
        metavar="S",
        help="lognormal repair times with this sigma (default: exponential)",
    ),
    Flag(
        "min_gpus",
        ("--shrink-to",),
        parse=integer_arg,
        metavar="GPUS",
        help="without enough spares, run smaller down to this many GPUs instead of waiting",
    ),
    Flag(
        "recovery_mode",
        ("--recovery-mode",),
        choices=RECOVERY_MODES,
        help="restart from a checkpoint, or continue on replicas",
    ),
    Flag(
        "replica_gpus",
        ("--replica-gpus",),
        parse=integer_arg,
        metavar="N",
        help="GPUs per data-parallel replica (continue)",
    ),
    Flag(
        "continue_stall_min",
        ("--continue-stall",),
        parse=number_arg,
        metavar="MIN",
        help="stall of the job when a replica fails (continue)",
    ),
    Flag(
        "max_replicas_lost",
        ("--max-replicas-lost",),
        parse=integer_arg,
        metavar="N",
        help="the most replicas one failure may take out and the job continue (continue)",
    ),
    Flag(
        "node_price_usd",
        ("--spare-node-price",),
        parse=number_arg,
        metavar="USD",
        help="what a spare node costs to buy: the pool costs its share of that over the run (default: the pool is "
        "priced as its GPU-hours at the price per GPU-hour)",
    ),
    Flag(
        "depreciation_years",
        ("--depreciation-years",),
        parse=number_arg,
        metavar="Y",
        help="years a bought spare node is written off over (default 5)",
    ),
    Flag(
        "rental_usd_per_node_hour",
        ("--spare-rental",),
        parse=number_arg,
        metavar="USD",
        help="what a rented spare node costs per hour",
    ),
)
#: Flag destination -> flag, for the messages that name a flag.
SPARES_FLAGS = {row.dest: row.flag for row in SPARES_TABLE}
#: Spares field -> the destination of the flag that sets it, for validation messages and the help's defaults (the
#: repair hours are a table by category, named by their own messages).
SPARES_FIELD_FLAGS = {row.field: row.dest for row in SPARES_TABLE if row.field != "repair_hours"}


def add_spares_flags(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("spares, repairs and recovery mode (docs/spares.md)")
    add_flags(g, SPARES_TABLE)


def uses_spares(args: argparse.Namespace) -> bool:
    """Whether any spares flag was given."""
    return any(getattr(args, f, None) is not None for f in SPARES_FLAGS)


def spares_from_args(args: argparse.Namespace, sc: Scenario) -> Spares:
    """The scenario's spares (or the defaults) with the flags' changes."""
    sp = sc.spares or Spares()
    changes: dict[str, Any] = {}
    if args.spare_nodes is not None:
        changes["spare_nodes"] = None if args.spare_nodes == "unlimited" else args.spare_nodes
    if args.swap is not None:
        changes["swap_min"] = args.swap
    if args.repair_hours:
        known = set(sc.categories)
        for cat, _ in args.repair_hours:
            if cat == CORRELATED_NAME:
                raise UsageError("--repair-hours: the correlated failures' repair is --correlated-repair-hours")
            if cat not in known:
                raise UsageError(
                    f"--repair-hours: no category '{fmt.clean(cat, 40)}' in the scenario (categories: "
                    f"{', '.join(sorted(known))})"
                )
            if cat not in node_categories(sc):
                raise UsageError(
                    f"--repair-hours: no cause of '{fmt.clean(cat, 40)}' takes a node (their failures are "
                    "process scope), so its repair time changes nothing"
                )
        changes["repair_hours"] = tuple(dict(args.repair_hours).items())
    if args.repair_sigma is not None:
        changes["repair_sigma"] = args.repair_sigma
    if args.shrink_to is not None:
        changes["min_gpus"] = args.shrink_to
    if args.recovery_mode is not None:
        changes["recovery_mode"] = args.recovery_mode
    if args.replica_gpus is not None:
        changes["replica_gpus"] = args.replica_gpus
    if args.continue_stall is not None:
        changes["continue_stall_min"] = args.continue_stall
    if args.max_replicas_lost is not None:
        changes["max_replicas_lost"] = args.max_replicas_lost
    if args.spare_node_price is not None:
        changes["node_price_usd"] = args.spare_node_price
    if args.depreciation_years is not None:
        changes["depreciation_years"] = args.depreciation_years
    if args.spare_rental is not None:
        changes["rental_usd_per_node_hour"] = args.spare_rental
    for key, value in changes.items():
        sp = Spares(**{**_fields(sp), key: value})
    if sp.recovery_mode != "continue":
        for field in ("replica_gpus", "continue_stall", "max_replicas_lost"):
            if getattr(args, field) is not None:
                raise UsageError(f"{SPARES_FLAGS[field]}: applies with --recovery-mode continue")
    if sp.spare_nodes is None:
        for field in ("spare_node_price", "depreciation_years", "spare_rental"):
            if getattr(args, field) is not None:
                raise UsageError(
                    f"{SPARES_FLAGS[field]}: prices a finite pool; with unlimited spares the pool costs nothing (give "
                    "--spare-nodes N)"
                )
    if args.depreciation_years is not None and sp.node_price_usd is None:
        raise UsageError("--depreciation-years: writes off a bought node; give its price (--spare-node-price)")
    if sp.spare_nodes is None and sp.recovery_mode == "restart" and not sc.rack_repairs_matter:
        for field in ("repair_hours", "repair_sigma"):
            if getattr(args, field) is not None:
                raise UsageError(
                    f"{SPARES_FLAGS[field]}: changes nothing with unlimited spares in restart mode; give "
                    "--spare-nodes N, --recovery-mode continue, or use 'sweep --over spares'"
                )
    try:
        check_spares_fit(sc, sp)
    except ValueError as exc:
        raise UsageError(_with_flag(str(exc))) from None
    return sp


def _fields(sp: Spares) -> dict[str, Any]:
    return {k: getattr(sp, k) for k in Spares.__dataclass_fields__}


_FIELD_FLAGS = {
    "spare_nodes": "--spare-nodes",
    "swap_min": "--swap",
    "repair hours": "--repair-hours",
    "repair_sigma": "--repair-sigma",
    "min_gpus": "--shrink-to",
    "recovery_mode": "--recovery-mode",
    "replica_gpus": "--replica-gpus",
    "continue_stall_min": "--continue-stall",
    "max_replicas_lost": "--max-replicas-lost",
    "node_price_usd": "--spare-node-price",
    "depreciation_years": "--depreciation-years",
    "rental_usd_per_node_hour": "--spare-rental",
}


def _with_flag(message: str) -> str:
    """The message with the field it starts with named by the flag that sets it."""
    for field, flag in _FIELD_FLAGS.items():
        if message.startswith(f"{field}: "):
            return f"{flag}: {message.removeprefix(f'{field}: ')}"
        if message.startswith(f"{field} must "):  # "spare_nodes must be ...": the flag says which, once
            return f"{flag}: {message.removeprefix(f'{field} ')}"
        if message.startswith(field):
            return f"{flag}: {message}"
    return message


def with_spares_flags(sc: Scenario, args: argparse.Namespace) -> tuple[Scenario, list[str]]:
    """``sc`` with the spares flags applied (none given, or a command without them: as it is), and their edits."""
    if not hasattr(args, "spare_nodes") or not uses_spares(args):
        return sc, []
    sp = spares_from_args(args, sc)
    if sp == sc.spares or (sc.spares is None and sp == Spares()):
        return sc, []
    given = " ".join(
        f"{flag} {_shown(getattr(args, field))}"
        for field, flag in SPARES_FLAGS.items()
        if getattr(args, field) is not None
    )
    return sc.replace(spares=sp), [given]


def spares_flag_names(args: argparse.Namespace) -> dict[str, str]:
    """For the messages of a validation: the ``spares.<field>`` each given spares flag set -> the flag."""
    if not hasattr(args, "spare_nodes"):
        return {}
    return {
        f"spares.{field}": SPARES_FLAGS[flag]
        for field, flag in SPARES_FIELD_FLAGS.items()
        if getattr(args, flag) is not None
    }


def _shown(value: Any) -> str:
    if isinstance(value, list):
        return " ".join(f"{c}={h:g}" for c, h in value)
    return f"{value:,}" if isinstance(value, int) else f"{value:g}" if isinstance(value, float) else str(value)
