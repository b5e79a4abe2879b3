"""A run of a scenario with spares, beside the closed forms of its pool: its report and JSON (``spares``
section), and the pool that 99 % of node-losing failures find their spares in."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..model.scenario import Scenario
from ..model.spares import Spares, SparesParams
from ..sim.run import HOURS_KEYS, SDC_HOURS_KEY, SLOW_HOURS_KEY, SPARES_HOURS_KEYS, SimTrials
from ..theory.profiles import is_flat
from ..theory.rates import RatePosterior
from ..theory.spares import nodes_in_repair_pmf, p_no_spare, recommended_spares, repair_quantile
from .summary import summarize

__all__ = ["POSTERIOR_DRAWS", "TARGET", "SparesRun", "spares_to_dict"]

#: Share of node-losing failures that must find a spare for the pool :func:`recommended_spares` gives.
TARGET = 0.99
#: Trials whose drawn rates average the pool's closed forms over the posterior (rate uncertainty).
POSTERIOR_DRAWS = 64


def spares_to_dict(sp: Spares) -> dict[str, Any]:
    """The spares inputs as plain JSON values (``spare_nodes`` null: unlimited)."""
    return {
        "spare_nodes": sp.spare_nodes,
        "swap_min": sp.swap_min,
        "repair_hours": dict(sp.repair_hours),
        "repair_sigma": sp.repair_sigma,
        "min_gpus": sp.min_gpus,
        "recovery_mode": sp.recovery_mode,
        "replica_gpus": sp.replica_gpus,
        "continue_stall_min": sp.continue_stall_min,
        "max_replicas_lost": sp.max_replicas_lost,
        "node_price_usd": sp.node_price_usd,
        "depreciation_years": sp.depreciation_years,
        "rental_usd_per_node_hour": sp.rental_usd_per_node_hour,
    }


@dataclass(frozen=True)
class SparesRun:
    """Monte Carlo trials of a scenario with its spares, beside the closed forms of the pool."""

    scenario: Scenario
    spares: Spares
    interval_min: float
    params: SparesParams
    trials: SimTrials

    @property
    def goodput(self) -> np.ndarray:
        return self.trials.hours["useful"] / self.scenario.hours

    def lost_gpu_hours(self) -> np.ndarray:
        return (self.scenario.hours - self.trials.hours["useful"]) * self.scenario.gpus

    @property
    def pool_cost_per_hour(self) -> float:
        """What the pool costs per hour it is held (:meth:`.spares.Spares.pool_cost_per_hour`)."""
        sc = self.scenario
        return self.spares.pool_cost_per_hour(sc.gpus_per_node, sc.gpu_hour_cost_usd)

    @property
    def idle_gpu_hours(self) -> float | None:
        """GPU-hours of the spare pool over the window (every spare is paid for, idle or in repair)."""
        s = self.spares.spare_nodes
        return None if s is None else s * self.scenario.gpus_per_node * self.scenario.hours

    def closed_forms(self) -> tuple[float, float, float] | None:
        """The pool's closed forms (M/G/infinity: the chance a failure finds no spare, the mean and the p95 of the
        nodes in repair) where they hold: a pool in its steady state, so not over rates that change in the
        window nor from a new cluster's empty pool, nor on racks whose warm spare trays cover some failures (their
        moves are no Poisson stream: None there), nor with bad nodes (whose failures are none either). With rate
        uncertainty, their average over the posterior (the first :data:`POSTERIOR_DRAWS` trials' drawn rates, each a
        steady state of its own)."""
        sc, p = self.scenario, self.params
        if sc.new_cluster or (sc.rate_profile is not None and not is_flat(sc.rate_profile, sc.days)):
            return None
        if (sc.uses_nvlink and sc.rack_spare_trays > 0) or sc.uses_bad:  # (bad nodes' failures: no Poisson stream)
            return None
        posterior = RatePosterior.of(sc.components)
        if not (sc.rate_uncertainty and posterior.uncertain.any()):
            return p_no_spare(p), p.mean_nodes_in_repair, repair_quantile(p, 0.95)
        draws = posterior.draw(sc.seed, min(sc.trials, POSTERIOR_DRAWS)) * sc.gpus
        ps = [dataclasses.replace(p, rates=d) for d in draws]
        pmfs = [nodes_in_repair_pmf(q) for q in ps]
        size = max(len(x) for x in pmfs)
        mixed = np.mean([np.pad(x, (0, size - len(x))) for x in pmfs], axis=0)
        p95 = float(np.searchsorted(np.cumsum(mixed), 0.95 * (1 - 1e-12)))
        # The chance a failure finds no spare, over the posterior: each draw's weighted by its node-loss rate.
        weights = np.array([float(q.node_loss_rates.sum()) for q in ps])
        chances = np.array([p_no_spare(q) for q in ps])
        share = float((weights * chances).sum() / weights.sum()) if weights.sum() > 0 else 0.0
        return share, float(np.mean([q.mean_nodes_in_repair for q in ps])), p95

    def recommended(self, closed_form: bool) -> int:
        """The pool in which 99 % of node-losing failures find their spares: M/G/infinity's where it holds,
        else the simulated failures' (the nodes in repair just after each, over the trials, with the rates
        as they change and the pool's start), so that it never contradicts the simulated chance of none."""
        simulated = None if closed_form else self.trials.pool_for(TARGET)
        return recommended_spares(self.params, TARGET) if simulated is None else simulated

    def spares_json(self) -> dict[str, Any]:
        closed = self.closed_forms()
        return {
            "p_no_spare": self.trials.p_no_spare(),
            "p_no_spare_expected": None if closed is None else closed[0],
            "nodes_in_repair": {
                "mean": float(self.trials.nodes_in_repair.mean()),
                "p95": self.trials.repair_quantile(0.95),
                "mean_expected": None if closed is None else closed[1],
                "p95_expected": None if closed is None else closed[2],
            },
            "idle_gpu_hours": self.idle_gpu_hours,
            "idle_cost_usd": None
            if self.idle_gpu_hours is None
            else self.idle_gpu_hours * self.scenario.gpu_hour_cost_usd,
            # What the pool costs as priced (bought: its price's share over the window; rented; else its GPU-hours).
            "pool_cost_per_hour_usd": self.pool_cost_per_hour,
            "pool_cost_usd": self.pool_cost_per_hour * self.scenario.hours,
            "pool_cost_basis": self.spares.pool_basis(),
            "recommended_for_99pct": self.recommended(closed is not None),
            "recommended_simulated": closed is None and self.trials.pool_for(TARGET) is not None,
            "node_failures": summarize(self.trials.node_failures).to_dict(),
            "continued": float((self.trials.unplanned - self.trials.restarts).mean())
            if self.trials.restarts is not None
            else 0.0,
            "inputs": spares_to_dict(self.spares),
        }

    def to_json_dict(self, base: dict[str, Any]) -> dict[str, Any]:
        """Today's report (``base``, from :meth:`.results.SimulationResult.to_json_dict`) with the Monte Carlo
        numbers of this model in place of today's, the two new hours and the ``spares`` section. The exact
        expectations of today's model do not hold here: those keys are null."""
        sc, t = self.scenario, self.trials
        lost = self.lost_gpu_hours()
        hours = {k: float(t.hours[k].mean()) for k in HOURS_KEYS}
        for k in SPARES_HOURS_KEYS:
            if self.applies(k):
                hours[k] = float(t.hours[k].mean())
        if sc.uses_slow:
            hours[SLOW_HOURS_KEY] = float(t.hours[SLOW_HOURS_KEY].mean())
        if t.sdc_found is not None:
            hours[SDC_HOURS_KEY] = float(t.hours[SDC_HOURS_KEY].mean())
        out = dict(base)
        out.update(
            {
                "interruptions": summarize(t.unplanned).to_dict(),
                "p_interrupted": float(np.mean(t.unplanned > 0)),
                "planned_interruptions": summarize(t.planned).to_dict(),
                "goodput": summarize(self.goodput).to_dict(),
                "goodput_expected": None,
                "goodput_expected_at_optimal_interval": None,
                "hours": hours,
                "hours_expected": None,
                "lost_gpu_hours": summarize(lost).to_dict(),
                "lost_cost_usd": float(lost.mean() * sc.gpu_hour_cost_usd),
                "spares": self.spares_json(),
            }
        )
        return out

    def applies(self, key: str) -> bool:
        """Whether an hours key of this model applies to these spares (it is reported only then)."""
        sp = self.spares
        if key == "waiting_for_spares":
            return sp.recovery_mode == "restart" and sp.spare_nodes is not None
        return sp.recovery_mode == "continue" or (sp.min_gpus is not None and sp.spare_nodes is not None)
