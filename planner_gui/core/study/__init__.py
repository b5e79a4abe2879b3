"""Design studies: many scenarios at once, on this machine or a Dask cluster, with global sensitivity.

A study file (TOML, :mod:`.spec`, read and checked by :mod:`.files`) names a base scenario, the inputs to vary
and a design (:mod:`.design`: full grid, Latin hypercube, Sobol); :mod:`.runners` runs its scenarios in this
process, on a local process pool or on a Dask cluster; :mod:`.store` writes one row per scenario to Parquet or
CSV as they finish and resumes an interrupted study; :mod:`.sobol` and :mod:`.summary` say what drives goodput
and which scenarios are best under a constraint.

The heavy packages (scipy.stats.qmc, SALib, pyarrow, dask.distributed) are imported only where used.
"""

from .design import design_size, scenario_doc, scenario_seed, values_of
from .files import loads_spec, read_spec
from .runners import Backend, local_workers, run_study
from .sobol import SobolIndices, sobol_indices
from .spec import Input, StudyError, StudySpec
from .store import ResultStore, StudyResults, output_format, read_results, study_meta
from .summary import Condition, best_scenarios, default_least, parse_condition, study_summary

__all__ = [
    "Backend",
    "Condition",
    "Input",
    "ResultStore",
    "SobolIndices",
    "StudyError",
    "StudyResults",
    "StudySpec",
    "best_scenarios",
    "default_least",
    "design_size",
    "loads_spec",
    "local_workers",
    "output_format",
    "parse_condition",
    "read_results",
    "read_spec",
    "run_study",
    "scenario_doc",
    "scenario_seed",
    "sobol_indices",
    "study_meta",
    "study_summary",
    "values_of",
]
