"""The random streams: one independent generator per scenario seed and stream id, so that each source of
randomness (counts, spacings, components, bad nodes, ...) keeps its draws whatever the others do."""

from __future__ import annotations

import numpy as np

__all__ = ["stream"]


def stream(seed: int, *words: int) -> np.random.Generator:
    """An independent generator for the scenario's ``seed`` and a stream id (and, for spacings, a chunk)."""
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence([seed, *words])))
