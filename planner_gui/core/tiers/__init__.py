"""Recovery strategies: an in-memory (fast) tier, a persistent tier with asynchronous uploads, and failure
scope (docs/tiers.md). Qt-free, like the rest of the core."""

from .engine import TierHours, TierTrials, simulate_tier_params, simulate_tiers
from .exact import TierIntervals, expected_fractions, optimal_tier_intervals, persistent_lag
from .model import (
    CATEGORY_SCOPES,
    DEFAULT_SCOPES,
    PLACEMENTS,
    SCOPES,
    Placement,
    Scope,
    TierParams,
    TierRates,
    Tiers,
    persistent_multiple,
    restoring_tier,
    scope_of,
    tier_params,
    tier_rates,
)

__all__ = [
    "CATEGORY_SCOPES",
    "DEFAULT_SCOPES",
    "PLACEMENTS",
    "SCOPES",
    "Placement",
    "Scope",
    "TierHours",
    "TierIntervals",
    "TierParams",
    "TierRates",
    "TierTrials",
    "Tiers",
    "expected_fractions",
    "optimal_tier_intervals",
    "persistent_lag",
    "persistent_multiple",
    "restoring_tier",
    "scope_of",
    "simulate_tier_params",
    "simulate_tiers",
    "tier_params",
    "tier_rates",
]
