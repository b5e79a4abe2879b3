"""Spares, repairs and fault-tolerant continuation (docs/spares.md). Qt-free, like the rest of the core."""

from .engine import HOURS_KEYS, SparesTrials, simulate_spares
from .model import DEFAULT_REPAIR_HOURS, RECOVERY_MODES, Spares, SparesParams, spares_params

__all__ = [
    "DEFAULT_REPAIR_HOURS",
    "HOURS_KEYS",
    "RECOVERY_MODES",
    "Spares",
    "SparesParams",
    "SparesTrials",
    "simulate_spares",
    "spares_params",
]
