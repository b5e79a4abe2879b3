"""What is known of each cause before a log: the prior a fit combines the log with.

A short log is weak evidence that a cause it never saw cannot happen. A fit therefore combines the log with a
prior, cause by cause, as if the prior's own evidence had been seen too, down-weighted: a cause seen ``n0`` times
over ``E0`` GPU-hours before, at weight ``w``, and ``n`` times over the log's ``E`` GPU-hours, has the rate
``(w n0 + n) / (w E0 + E)`` (the Gamma posterior of a Poisson rate under the prior's weighted evidence, with
Jeffreys' ``1/2`` for its interval; a *power prior*, Ibrahim and Chen 2000). The prior's share of a rate is
``w E0 / (w E0 + E)``: the larger the log, the less the prior counts. A cause the log never saw keeps the prior's
weighted evidence (a rate above 0); a cause the prior does not know is the log's alone.

The default prior is Llama 3's Table 5 (419 interruptions of 18 causes over 16,384 GPUs x 54 days) at weight
:data:`DEFAULT_PRIOR_WEIGHT`: a tenth of its 884,736 GPU-days, as much as a 2,048-GPU log of 43 days. A prior may
also be a scenario file: each component's evidence (its own ``count`` and ``exposure_gpu_hours``, or its Llama 3
cause's by name).
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from pathlib import Path

from ..model.scenario import Scenario, llama3_components
from ..theory.rates import evidence_of
from ..util.fmt import clean
from .logs import IncidentLogError

__all__ = ["DEFAULT_PRIOR", "DEFAULT_PRIOR_WEIGHT", "PRIORS", "Prior", "PriorCause", "llama3_prior", "load_prior"]

#: The weight of the default prior: it counts as a tenth of the evidence it came from.
DEFAULT_PRIOR_WEIGHT = 0.1
#: The priors by name (``--prior``); any other value is a scenario file.
PRIORS = ("none", "llama3")
DEFAULT_PRIOR = "llama3"


@dataclass(frozen=True)
class PriorCause:
    """One cause's evidence before the log (not yet weighted): ``count`` seen over ``exposure_gpu_hours``."""

    name: str
    category: str
    count: float
    exposure_gpu_hours: float


@dataclass(frozen=True)
class Prior:
    """A prior: its causes' evidence and the weight it counts at (``0 < weight <= 1``)."""

    name: str
    weight: float
    causes: tuple[PriorCause, ...]

    def weighted(self, cause: PriorCause) -> tuple[float, float]:
        """The cause's count and exposure as the fit counts them."""
        return self.weight * cause.count, self.weight * cause.exposure_gpu_hours

    @property
    def exposure_gpu_hours(self) -> float:
        """The weighted exposure of its causes (the largest, where they differ)."""
        return self.weight * max((c.exposure_gpu_hours for c in self.causes), default=0.0)

    def describe(self) -> str:
        """``"Llama 3 Table 5 at weight 0.1 (88,474 GPU-days)"``."""
        return f"{self.name} at weight {self.weight:g} ({self.exposure_gpu_hours / 24.0:,.0f} GPU-days)"

    def to_dict(self) -> dict[str, object]:
        return {
            "name": self.name,
            "weight": self.weight,
            "exposure_gpu_hours": self.exposure_gpu_hours,
            "causes": [
                {
                    "name": c.name,
                    "category": c.category,
                    "count": c.count,
                    "exposure_gpu_hours": c.exposure_gpu_hours,
                }
                for c in self.causes
            ],
        }


def _check_weight(weight: float) -> float:
    if isinstance(weight, bool) or not isinstance(weight, (int, float)) or not (0.0 < weight <= 1.0):
        raise IncidentLogError(f"the prior's weight must be above 0 and at most 1 (got {clean(repr(weight), 30)})")
    return float(weight)


def llama3_prior(weight: float = DEFAULT_PRIOR_WEIGHT) -> Prior:
    """Llama 3's Table 5, each cause's count over 16,384 GPUs x 54 days, at ``weight``."""
    causes = []
    for c in llama3_components():
        ev = evidence_of(c)
        assert ev is not None
        causes.append(PriorCause(c.name, c.category, float(ev.count), float(ev.exposure_gpu_hours)))
    return Prior("Llama 3 Table 5", _check_weight(weight), tuple(causes))


def prior_of_scenario(scenario: Scenario, name: str, weight: float = DEFAULT_PRIOR_WEIGHT) -> Prior:
    """A scenario's components as a prior: each one's evidence (its own, else its Llama 3 cause's by name)."""
    causes = []
    for c in scenario.components:
        ev = evidence_of(c)
        if ev is None or not math.isfinite(ev.exposure_gpu_hours) or ev.exposure_gpu_hours <= 0:
            raise IncidentLogError(
                f"prior {clean(name, 60)}: component '{clean(c.name, 40)}' has no evidence (give its count and "
                "exposure_gpu_hours, or use a Llama 3 cause's name)"
            )
        causes.append(PriorCause(c.name, c.category, float(ev.count), float(ev.exposure_gpu_hours)))
    return Prior(name, _check_weight(weight), tuple(causes))


def load_prior(spec: str | os.PathLike[str], weight: float = DEFAULT_PRIOR_WEIGHT) -> Prior | None:
    """``"none"`` (the log alone: None), ``"llama3"``, or a scenario file's components."""
    if isinstance(spec, str) and spec == "none":
        return None
    if isinstance(spec, str) and spec == "llama3":
        return llama3_prior(weight)
    from ..files.scenario_io import ScenarioError, load

    path = Path(os.fsdecode(os.fspath(spec)))
    try:
        scenario = load(path)
    except ScenarioError as exc:
        raise IncidentLogError(f"prior: {exc}") from None
    return prior_of_scenario(scenario, path.name, weight)
