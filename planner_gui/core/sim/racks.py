"""The racks of docs/model.md section 1, "Racks": which failures a rack's warm spare tray covers, and when a rack
that moved is back.

On rack-scale NVLink domains a failure that takes nodes stops its rack. A tray failure (a failure of scope
``node``) is covered by a warm spare tray of its own rack when one is free: the failed tray is repaired in the rack
and nothing leaves the job's racks. Otherwise the rack moves: the job's slice goes to a spare rack of the pool, and
the rack is back in the pool once the failure is repaired (its spares in repair are repaired meanwhile). A rack that
comes in is whole (every warm spare free). A failure of scope ``domain`` moves its rack; a correlated event moves as
many racks as it takes domains, consecutive from its first (a row of racks).

:class:`Racks` carries, per trial, the warm spares in repair from one chunk of the world to the next, and
:meth:`Racks.place` decides a chunk's failures in time order within each rack.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["Racks", "settle_hours"]

#: The most racks of all trials counted densely (a count per rack: 32 MB at most).
_DENSE_RACKS = 4_000_000
#: What a repair under way may still hold of its mean after the hours a world's start lives before it.
SETTLE_SHARE = 1e-4


def settle_hours(mean: float, sigma: float | None, share: float = SETTLE_SHARE) -> float:
    """The smallest ``W`` with ``E[(R - W)+] <= share E[R]`` for a repair ``R`` of this mean, exponential (``sigma``
    None) or lognormal with that sigma of its log: after ``W`` hours a world started with no node in repair holds
    what its steady state holds but for that share."""
    if mean <= 0:
        return 0.0
    if sigma is None:  # E[(R - W)+] = mean e^(-W / mean)
        return mean * math.log(1.0 / share)
    if sigma == 0:
        return mean
    s = sigma

    def excess(w: float) -> float:  # E[(R - W)+] / mean
        x = math.log(w / mean)
        return 0.5 * math.erfc((x - s * s / 2) / s / math.sqrt(2)) - (w / mean) * 0.5 * math.erfc(
            (x + s * s / 2) / s / math.sqrt(2)
        )

    lo, hi = mean * 1e-6, mean
    while excess(hi) > share:
        hi *= 2.0
    for _ in range(100):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if excess(mid) > share else (lo, mid)
    return hi


class Racks:
    """The warm spare trays in repair of ``racks`` racks of ``spares`` warm spares each, for ``trials`` trials."""

    def __init__(self, trials: int, racks: int, spares: int) -> None:
        self.n, self.racks, self.spares = trials, racks, spares
        # The spares in repair carried between calls: their rack's key (row x racks + rack, sorted) and end.
        self.key = np.zeros(0, dtype=np.int64)
        self.end = np.zeros(0)

    def place(
        self,
        rng: np.random.Generator,
        rows: np.ndarray,
        times: np.ndarray,
        back: np.ndarray,
        take: np.ndarray,
        coverable: np.ndarray,
        now: float,
    ) -> np.ndarray:
        """Failures that take nodes (flat: each one's row, time, the end of its repair, the racks it takes, and
        whether a warm spare may cover it): whether a warm spare covered each. ``now``: no later call has a failure
        before it (spares back by then are forgotten)."""
        covered = np.zeros(len(times), dtype=bool)
        if self.spares == 0 or not len(times):
            return covered
        first = rng.integers(0, self.racks, len(times))
        # One entry per rack a failure takes.
        ev = np.repeat(np.arange(len(times)), take)
        step = np.arange(len(ev)) - np.repeat(np.cumsum(take) - take, take)
        key = rows[ev].astype(np.int64) * self.racks + (first[ev] + step) % self.racks
        t = times[ev]
        can = coverable[ev] & (take[ev] == 1)
        # Most racks see one failure here and have no spare in repair: a free spare covers it if it may. The others
        # (several failures, or spares in repair) are decided in time order, rack by rack.
        once, carried = self._alone(key)
        alone = once & ~carried
        sub_cover = np.where(alone, can, False)
        new_key, new_end = [key[alone & can]], [back[ev[alone & can]]]
        hard = np.flatnonzero(~alone)
        mine = np.isin(self.key, key[~alone])  # (carried spares of the racks decided in order)
        if len(hard):
            order = hard[np.lexsort((t[hard], key[hard]))]
            hk, ht = key[order], t[order]
            head = np.concatenate([[True], hk[1:] != hk[:-1]])
            groups = hk[head]
            gi = np.cumsum(head) - 1
            pos = np.arange(len(hk)) - np.flatnonzero(head)[gi]
            # Each rack's spares: the carried ones' ends (in repair) at its first places, -inf where free.
            slots = np.full((len(groups), self.spares), -np.inf)
            if mine.any():
                ck, ce = self.key[mine], self.end[mine]
                g = np.searchsorted(groups, ck)
                first_of = np.searchsorted(ck, ck, side="left")
                slots[g, np.arange(len(ck)) - first_of] = ce
            by_pos = np.argsort(pos, kind="stable")
            bounds = np.concatenate([[0], np.cumsum(np.bincount(pos))])
            for p in range(len(bounds) - 1):
                sel = by_pos[bounds[p] : bounds[p + 1]]
                g, ts, at = gi[sel], ht[sel], order[sel]
                s = slots[g]
                free = s <= ts[:, None]
                cover = can[at] & free.any(axis=1)
                if cover.any():
                    slots[g[cover], np.argmax(free[cover], axis=1)] = back[ev[at[cover]]]
                slots[g[~cover]] = -np.inf  # (the rack that comes in is whole)
                sub_cover[at] = cover
            keep_g = slots > now
            new_key.append(np.broadcast_to(groups[:, None], slots.shape)[keep_g])
            new_end.append(slots[keep_g])
        covered[ev[sub_cover]] = True  # (a covered failure takes one rack: its one entry)
        # Carry the spares still in repair at ``now``: the untouched racks' and these racks' own.
        key_all = np.concatenate([self.key[~mine], *new_key])
        end_all = np.concatenate([self.end[~mine], *new_end])
        live = end_all > now
        order = np.argsort(key_all[live], kind="stable")
        self.key, self.end = key_all[live][order], end_all[live][order]
        return covered

    def _alone(self, key: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Per entry: whether its rack has no other entry here, and whether it has spares in repair carried."""
        size = self.n * self.racks
        if size <= _DENSE_RACKS:  # (a count per rack of every trial: quicker than sorting)
            seen = np.bincount(key, minlength=size)
            busy = np.zeros(size, dtype=bool)
            busy[self.key] = True
            return seen[key] == 1, busy[key]
        _, inverse, counts = np.unique(key, return_inverse=True, return_counts=True)
        return counts[inverse] == 1, np.isin(key, self.key)
