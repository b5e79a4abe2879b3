"""Study files read and checked: parsed (:mod:`.spec`), then the design's size and every scenario's validity
(:mod:`.design`). The one way in for a study file: the command line, the window and the tests read them here."""

from __future__ import annotations

from pathlib import Path

from ..util.fmt import clean
from .design import check_design
from .spec import StudyError, StudySpec, parse_spec, read_text

__all__ = ["loads_spec", "read_spec"]


def loads_spec(text: str, folder: Path | None = None, default_name: str = "study") -> StudySpec:
    """Parse and check a study from TOML text; ``folder`` resolves a relative base scenario file."""
    spec = parse_spec(text, folder, default_name)
    check_design(spec)
    return spec


def read_spec(path: str | Path) -> StudySpec:
    """Read and check a study file (its base scenario file, if any, is relative to the study file)."""
    p, text = read_text(path)
    try:
        return loads_spec(text, folder=p.parent, default_name=p.stem)
    except StudyError as exc:
        raise StudyError(f"{clean(p.name, 80)}: {exc}") from None
