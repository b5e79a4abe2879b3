"""Analyses that run the engine over several scenarios and say what they mean: spare-pool runs and sizing
(:mod:`.sizing`), restart against continue (:mod:`.modes`), recovery strategies side by side
(:mod:`.strategies`). Qt-free, like the rest of the core; the feature folders (:mod:`..tiers`, :mod:`..spares`)
hold only their models and closed forms, and import nothing from here."""
