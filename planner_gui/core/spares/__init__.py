"""Spares, repairs and fault-tolerant continuation (docs/spares.md). Qt-free, like the rest of the core.

Scenarios with spares run on the general engine (:mod:`..sim`, docs/model.md)."""

from .model import DEFAULT_REPAIR_HOURS, RECOVERY_MODES, Spares, SparesParams, spares_params

__all__ = [
    "DEFAULT_REPAIR_HOURS",
    "RECOVERY_MODES",
    "Spares",
    "SparesParams",
    "spares_params",
]
