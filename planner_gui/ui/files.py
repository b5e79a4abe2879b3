"""The window's file work: new, open, save, recent files, exports, and the remembered session.

:class:`FileWindow` is the base of :class:`~planner_gui.ui.main_window.MainWindow`: it reads and writes
the window's ``inputs`` (the scenario being edited), ``settings`` and ``last_result``, which the main
window sets up.
"""

from __future__ import annotations

import dataclasses
import logging
from pathlib import Path

from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QFileDialog, QLabel, QMainWindow, QMenu, QMessageBox

from ..core.analysis.sensitivity import sensitivity
from ..core.files.presets import DEFAULT_PRESET, load_preset
from ..core.files.scenario_io import ScenarioError, dumps, load, loads, save
from ..core.model.scenario import Scenario
from ..core.session.inputs import Inputs
from ..core.session.plan import FULL, PlanResult
from ..core.util import fmt
from ..core.util.userfiles import write_atomic
from .export import caption_lines, export_plots, export_results
from .planning import PlanningPanel
from .plots import PlotsPanel

log = logging.getLogger(__name__)

__all__ = ["FileWindow"]

MAX_RECENT = 8
FILE_FILTER = "Scenario (*.json);;All files (*)"


class FileWindow(QMainWindow):
    """File menu actions; every failure is a dialog that names the file and the problem."""

    # Set up by the main window.
    settings: QSettings
    inputs: Inputs
    plots: PlotsPanel
    status: QLabel
    recent_menu: QMenu
    last_result: PlanResult | None
    pins: list[tuple[str, PlanResult]]
    planning: PlanningPanel

    @property
    def _path(self) -> Path | None:
        """The file being edited (None when untitled); part of the undo history's state (see core/session/inputs.py)."""
        return self.inputs.path

    @_path.setter
    def _path(self, value: Path | None) -> None:
        self.inputs.path = value

    def results_current(self) -> bool:
        raise NotImplementedError

    def set_scenario(self, sc: Scenario, path: Path | None = None, what: str = "") -> None:
        raise NotImplementedError

    def _update_title(self) -> None:
        raise NotImplementedError

    def _error(self, title: str, message: str) -> None:
        QMessageBox.critical(self, title, message)

    # -- the remembered session ------------------------------------------------------------
    def _restored_session(self) -> tuple[Scenario, Path | None] | None:
        """The scenario (and file) of the last session, or None. A bad one is dropped and logged."""
        text = self.settings.value("session/scenario")
        if text is None:
            return None
        try:
            if not isinstance(text, str):
                raise ScenarioError("not a scenario document")
            sc = loads(text)
        except Exception as exc:  # anything at all: a bad memory must never stop the app from starting
            log.warning("dropping the remembered scenario: %s", fmt.clean(str(exc), 200))
            self.settings.remove("session/scenario")
            self.settings.remove("session/path")
            return None
        path = self.settings.value("session/path")
        if isinstance(path, str) and path:
            try:
                if load(path) == sc:
                    return sc, Path(path)
            except ScenarioError:
                pass
        return sc, None

    def _remember_session(self) -> None:
        """Remember the scenario as last opened or saved (unsaved edits were saved or discarded)."""
        self.settings.setValue("session/scenario", dumps(self.inputs.saved))
        self.settings.setValue("session/path", str(self._path) if self._path else "")

    # -- scenarios --------------------------------------------------------------------------------
    def _confirm_discard(self) -> bool:
        """True when it is fine to replace the current scenario (saved, discarded, or unchanged)."""
        if not self.inputs.dirty:
            return True
        what = fmt.clean(self._path.name, 60) if self._path else f"'{fmt.clean(self.inputs.scenario.name, 60)}'"
        answer = QMessageBox.question(
            self,
            "Unsaved changes",
            f"{what} has unsaved changes. Save them first?",
            QMessageBox.StandardButton.Save | QMessageBox.StandardButton.Discard | QMessageBox.StandardButton.Cancel,
            QMessageBox.StandardButton.Save,
        )
        if answer == QMessageBox.StandardButton.Save:
            return self.save()
        return answer == QMessageBox.StandardButton.Discard

    def new_scenario(self) -> None:
        if self._confirm_discard():
            self.set_scenario(load_preset(DEFAULT_PRESET), what="new scenario")

    def load_preset(self, name: str) -> None:
        if self._confirm_discard():
            sc = load_preset(name)
            self.set_scenario(sc, what=f"preset {fmt.clean(sc.name, 60)}")

    def open_dialog(self) -> None:
        if not self._confirm_discard():
            return
        path, _ = QFileDialog.getOpenFileName(self, "Open scenario", self._dialog_dir(), FILE_FILTER)
        if path:
            self.open_file(path, confirm=False)

    def open_file(self, path: str | Path, *, confirm: bool = True) -> bool:
        """Load a scenario file; on any problem show a dialog and keep the current scenario."""
        if confirm and not self._confirm_discard():
            return False
        try:
            sc = load(path)
        except ScenarioError as exc:
            self._error("Cannot open scenario", str(exc))
            return False
        self.set_scenario(sc, Path(path), what=f"open {fmt.clean(Path(path).name, 60)}")
        self._add_recent(Path(path))
        return True

    def save(self) -> bool:
        if self._path is None:
            return self.save_as()
        return self._save_to(self._path)

    def save_as(self) -> bool:
        path, _ = QFileDialog.getSaveFileName(self, "Save scenario", self._dialog_dir("scenario.json"), FILE_FILTER)
        if not path:
            return False
        if not path.lower().endswith(".json"):
            path += ".json"
        return self._save_to(Path(path))

    def _save_to(self, path: Path) -> bool:
        try:
            save(self.inputs.scenario, path)
        except (ScenarioError, ValueError) as exc:
            self._error("Cannot save scenario", fmt.clean(str(exc), 300))
            return False
        self._path = path
        self.inputs.mark_saved()
        self._add_recent(path)
        self._update_title()
        self.status.setText(f"Saved {fmt.clean(str(path), 120)}")
        return True

    # -- recent files -------------------------------------------------------------------------------
    def _dialog_dir(self, name: str = "") -> str:
        folder = self._path.parent if self._path else Path(str(self.settings.value("files/dir", str(Path.home()))))
        return str(folder / name) if name else str(folder)

    def _add_recent(self, path: Path) -> None:
        recent = [p for p in self._recent() if p != str(path.resolve())]
        recent.insert(0, str(path.resolve()))
        self.settings.setValue("files/recent", recent[:MAX_RECENT])
        self.settings.setValue("files/dir", str(path.resolve().parent))
        self._refresh_recent()

    def _recent(self) -> list[str]:
        value = self.settings.value("files/recent", [])
        if isinstance(value, str):  # QSettings gives one entry back as a plain string
            return [value]
        return [str(v) for v in value] if isinstance(value, (list, tuple)) else []

    def _refresh_recent(self) -> None:
        self.recent_menu.clear()
        for p in self._recent():
            act = self.recent_menu.addAction(fmt.clean(p, 120))
            act.triggered.connect(lambda _=False, p=p: self.open_file(p))
        self.recent_menu.setEnabled(bool(self._recent()))

    # -- exports ---------------------------------------------------------------------------------------
    def export_plots_dialog(self) -> None:
        path, chosen = QFileDialog.getSaveFileName(
            self, "Export plots", self._dialog_dir("plots.png"), "PNG image (*.png);;SVG drawing (*.svg)"
        )
        if path:
            if not path.lower().endswith((".png", ".svg")):
                path += ".svg" if "svg" in chosen.lower() else ".png"
            self.export_plots_to(path)

    def export_plots_to(self, path: str | Path) -> list[Path]:
        """Write every plot beside ``path``, each with a caption of the inputs and results it shows."""
        caption = caption_lines(self.last_result, self.inputs.scenario) if self.last_result else []
        try:
            written = export_plots(self.plots.widgets, path, caption)
        except (OSError, ValueError) as exc:
            self._error("Cannot export plots", fmt.clean(str(exc), 300))
            return []
        self.status.setText(f"Exported {len(written)} plots beside {fmt.clean(Path(path).name)}")
        return written

    def export_results_dialog(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Export results", self._dialog_dir("results.csv"), "CSV (*.csv)")
        if path:
            self.export_results_to(path if path.lower().endswith(".csv") else path + ".csv")

    def export_report_dialog(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Export report", self._dialog_dir("report.html"), "HTML (*.html)")
        if path:
            self.export_report_to(path if path.lower().endswith((".html", ".htm")) else path + ".html")

    def export_report_to(self, path: str | Path) -> Path | None:
        """Write the one-page HTML report of the results shown (the current scenario, the pinned ones beside
        it, the sensitivity at the Planning tab's factor), as ``planner-gui report`` does."""
        if self.last_result is None or not self.results_current() or self.last_result.request.quality != FULL:
            self._error(
                "Cannot export the report yet",
                "The report needs the full results of the current inputs: wait until the status bar says "
                "'Showing', then export again.",
            )
            return None
        from ..report.document import MAX_COMPARED, render_report  # (the report's modules: when one is written)

        pins = self.pins[-MAX_COMPARED:]
        res = dataclasses.replace(
            self.last_result, main=dataclasses.replace(self.last_result.main, scenario=self.inputs.scenario)
        )
        factor = self.planning.factor.value()
        if res.effects is not None:  # ranked by paired Monte Carlo in the compute process, at its factor
            effects, factor = res.effects, res.request.factor
        else:
            effects = sensitivity(self.inputs.scenario, factor)
        try:
            html = render_report(
                res,
                [r for _, r in pins],
                effects,
                labels=[f"{self.inputs.scenario.name} (current)", *(label for label, _ in pins)],
                factor=factor,
                unsure=self.planning.tornado.current(),
            )
            target = Path(path)
            write_atomic(target, html)
        except (OSError, ValueError, ScenarioError) as exc:
            self._error("Cannot export the report", fmt.clean(f"{path}: {getattr(exc, 'strerror', None) or exc}", 300))
            return None
        dropped = len(self.pins) - len(pins)
        more = f" (the {dropped} oldest pinned left out: a report compares at most {MAX_COMPARED})" if dropped else ""
        self.status.setText(f"Exported the report to {fmt.clean(target.name)}{more}")
        return target

    def export_results_to(self, path: str | Path) -> list[Path]:
        if self.last_result is None:
            self._error("Cannot export results", "There are no results yet.")
            return []
        try:
            written = export_results(self.last_result, path)
        except (OSError, ValueError, ScenarioError) as exc:
            self._error("Cannot export results", fmt.clean(f"{path}: {getattr(exc, 'strerror', None) or exc}", 300))
            return []
        self.status.setText(f"Exported results to {fmt.clean(written[0].name)} and the two sweeps beside it")
        return written
