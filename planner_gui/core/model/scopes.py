"""Failure scopes (docs/model.md section 1, "Scope and nodes"): whose nodes a failure takes, by component.

A scope says whose host memory the failure takes with it (what decides whether an in-memory snapshot survives) and
how many nodes go to repair. Model-level: every layer above reads it.
"""

from __future__ import annotations

import csv
import functools
from importlib import resources
from typing import cast

from .scenario import ClassScope, Component, Scenario, Scope

__all__ = ["CATEGORY_SCOPES", "DEFAULT_SCOPES", "class_scopes", "scope_of"]


@functools.cache
def _default_scopes() -> dict[str, tuple[Scope, str]]:
    text = resources.files("planner_gui.core").joinpath("data/llama3_scopes.csv").read_text("utf-8")
    rows = csv.DictReader(text.splitlines())
    return {r["component"]: (cast(Scope, r["scope"]), r["reason"]) for r in rows}


#: Default scope of each Llama 3 cause (arXiv 2407.21783, Table 5), with the reason, from
#: ``data/llama3_scopes.csv``. A scope says whose host memory the failure takes with it, which is what
#: decides whether an in-memory snapshot survives.
DEFAULT_SCOPES: dict[str, tuple[Scope, str]] = _default_scopes()

#: Scope of a component that :data:`DEFAULT_SCOPES` does not name, by its category (else ``node``).
CATEGORY_SCOPES: dict[str, Scope] = {
    "GPU": "node",
    "Host": "node",
    "Network": "domain",
    "Unplanned Maintenance": "node",
    "Dependency": "process",
    "Unknown": "process",
}


def scope_of(component: Component) -> Scope:
    """A component's failure scope: its own, else its default by name, else by category."""
    if component.scope is not None:
        return component.scope
    if component.name in DEFAULT_SCOPES:
        return DEFAULT_SCOPES[component.name][0]
    return CATEGORY_SCOPES.get(component.category, "node")


def class_scopes(scenario: Scenario) -> tuple[ClassScope, ...]:
    """The scope of each failure class (:attr:`.scenario.Scenario.failure_components`): the components', then
    :data:`.scenario.CORRELATED_SCOPE` for the correlated events when on."""
    own: tuple[ClassScope, ...] = tuple(scope_of(c) for c in scenario.components)
    return (*own, "correlated") if scenario.uses_correlated else own
