"""Decisions on top of analyses and studies: goal seek (:mod:`.optimize`), the cheapest setup meeting a target,
which hands searches too large for it to a study."""
