"""The main window: controls on the left, summary and plots on the right, menus around them."""

from __future__ import annotations

import logging
from pathlib import Path

from PySide6.QtCore import QByteArray, QSettings, Qt, QTimer, Signal
from PySide6.QtGui import QAction, QCloseEvent, QKeySequence
from PySide6.QtWidgets import (
    QDialog,
    QFileDialog,
    QLabel,
    QMainWindow,
    QMessageBox,
    QProgressBar,
    QPushButton,
    QSplitter,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from ..core.model import Scenario
from ..core.scenario_io import ScenarioError, dumps, load, load_preset, loads, preset_names, save, validate
from .compute import FULL, PREVIEW, ComputeController, PlanResult
from .controls import ControlsPanel
from .docs import about_html, model_html
from .export import export_plots, export_results
from .plots import PlotsPanel
from .resources import app_icon
from .summary import SummaryStrip

log = logging.getLogger(__name__)

__all__ = ["MainWindow"]

MAX_RECENT = 8
FILE_FILTER = "Scenario (*.json);;All files (*)"


class MainWindow(QMainWindow):
    """The planner's window. ``resultsShown`` fires each time the plots show results for the latest inputs."""

    resultsShown = Signal()

    def __init__(self, scenario: Scenario | None = None, *, restore: bool = True) -> None:
        super().__init__()
        self.setObjectName("plannerMainWindow")
        self.setWindowIcon(app_icon())
        self.setMinimumSize(1100, 700)
        self.settings = QSettings()
        if scenario is None:
            scenario = (self._restored_scenario() if restore else None) or load_preset("llama3-405b")
        self._path: Path | None = None
        self._saved_text = dumps(scenario)
        self.last_result: PlanResult | None = None
        self._preview_wanted = False
        self._full_wanted = False
        self._render_steps: list = []
        self._rendering = False

        self.controls = ControlsPanel(scenario)
        self.summary = SummaryStrip()
        self.summary.set_price(scenario.gpu_hour_cost_usd)
        self.plots = PlotsPanel()
        right = QWidget()
        lay = QVBoxLayout(right)
        lay.setContentsMargins(4, 4, 4, 4)
        lay.addWidget(self.summary)
        lay.addWidget(self.plots, 1)
        split = QSplitter(Qt.Orientation.Horizontal)
        split.addWidget(self.controls)
        split.addWidget(right)
        split.setStretchFactor(1, 1)
        split.setSizes([430, 1000])
        self.setCentralWidget(split)

        self.compute = ComputeController(self)
        self.compute.resultReady.connect(self._show)
        self.compute.failed.connect(self._compute_failed)
        self.compute.progress.connect(self._progress)
        self.compute.busyChanged.connect(self._busy)
        self.controls.changed.connect(self._inputs_changed)
        self.controls.dragFinished.connect(self._drag_finished)
        self.summary.priceChanged.connect(lambda _usd: self._update_title())

        self._build_status_bar()
        self._build_menus()
        if restore:
            geometry = self.settings.value("window/geometry")
            if isinstance(geometry, QByteArray):
                self.restoreGeometry(geometry)
        if not restore or self.settings.value("window/geometry") is None:
            self.resize(1440, 900)
        self._update_title()
        QTimer.singleShot(0, self.recompute)

    # -- construction -------------------------------------------------------------------
    def _build_status_bar(self) -> None:
        bar = self.statusBar()
        self.status = QLabel("")
        self.status.setObjectName("statusLabel")
        self.progress = QProgressBar()
        self.progress.setRange(0, 1000)
        self.progress.setMaximumWidth(200)
        self.progress.setTextVisible(False)
        self.progress.setVisible(False)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setObjectName("cancelButton")
        self.cancel_button.setVisible(False)
        self.cancel_button.clicked.connect(self._cancel)
        bar.addWidget(self.status, 1)
        bar.addPermanentWidget(self.progress)
        bar.addPermanentWidget(self.cancel_button)

    def _action(self, menu, text: str, slot, shortcut=None, name: str = "") -> QAction:
        act = QAction(text, self)
        if shortcut is not None:
            act.setShortcut(QKeySequence(shortcut))
        if name:
            act.setObjectName(name)
        act.triggered.connect(slot)
        menu.addAction(act)
        return act

    def _build_menus(self) -> None:
        mb = self.menuBar()
        f = mb.addMenu("&File")
        self._action(f, "&New", self.new_scenario, QKeySequence.StandardKey.New, "actionNew")
        self._action(f, "&Open...", self.open_dialog, QKeySequence.StandardKey.Open, "actionOpen")
        self.recent_menu = f.addMenu("Open &Recent")
        self._action(f, "&Save", self.save, QKeySequence.StandardKey.Save, "actionSave")
        self._action(f, "Save &As...", self.save_as, QKeySequence.StandardKey.SaveAs, "actionSaveAs")
        f.addSeparator()
        self._action(f, "Export &Plots (PNG, SVG)...", self.export_plots_dialog, "Ctrl+E", "actionExportPlots")
        self._action(f, "Export Results (&CSV)...", self.export_results_dialog, "Ctrl+Shift+E", "actionExportCsv")
        f.addSeparator()
        self._action(f, "&Quit", self.close, QKeySequence.StandardKey.Quit, "actionQuit")
        p = mb.addMenu("&Presets")
        for name in preset_names():
            self._action(p, name, lambda _=False, n=name: self.load_preset(n))
        v = mb.addMenu("&View")
        self._action(v, "&Pin Baseline", self.pin_baseline, "Ctrl+B", "actionPinBaseline")
        self._action(v, "&Clear Baseline", self.clear_baseline, "Ctrl+Shift+B", "actionClearBaseline")
        h = mb.addMenu("&Help")
        self._action(h, "&Model and Sources", self.show_model, QKeySequence.StandardKey.HelpContents, "actionModel")
        self._action(h, "&About planner-gui", self.show_about, None, "actionAbout")
        self._refresh_recent()

    # -- scenario state --------------------------------------------------------------------
    def scenario(self) -> Scenario:
        """The scenario the window shows (the controls plus the price)."""
        return self.controls.scenario().replace(gpu_hour_cost_usd=self.summary.price.value())

    @property
    def dirty(self) -> bool:
        return dumps(self.scenario()) != self._saved_text

    def set_scenario(self, sc: Scenario, path: Path | None = None) -> None:
        self.controls.set_scenario(sc)
        self.summary.set_price(sc.gpu_hour_cost_usd)
        self._path = path
        self._saved_text = dumps(self.scenario())
        self._update_title()
        self.recompute()

    def _update_title(self) -> None:
        where = self._path.name if self._path else "untitled"
        self.setWindowTitle(f"{where}{' *' if self.dirty else ''} - {self.controls.scenario().name} - planner-gui")

    def _restored_scenario(self) -> Scenario | None:
        text = self.settings.value("session/scenario")
        if not isinstance(text, str):
            return None
        try:
            return loads(text)
        except ScenarioError as exc:
            log.warning("ignoring the remembered scenario: %s", exc)
            return None

    # -- computing ----------------------------------------------------------------------
    def recompute(self, preview: bool = False) -> None:
        """Ask the compute process for results for the current inputs (full quality unless ``preview``)."""
        try:
            sc = validate(self.scenario())
        except ScenarioError as exc:
            self.status.setText(f"Cannot compute: {exc}")
            return
        self.compute.submit(sc, PREVIEW if preview else FULL)

    def _inputs_changed(self, dragging: bool) -> None:
        """Progressive refinement: a quick low-trial preview first, then the full run.

        While a slider is dragged, previews run one at a time (the next starts when one is shown) and the
        full run waits for the hand to stop. Any other change starts its preview at once, abandoning
        whatever was running, and the full run follows it.
        """
        self._update_title()
        if not dragging:
            self._preview_wanted = False
            self._full_wanted = True
            self.recompute(preview=True)
        elif self.compute.busy:
            self._preview_wanted = True
        else:
            self.recompute(preview=True)

    def _drag_finished(self) -> None:
        self._preview_wanted = False
        self._full_wanted = False
        self.recompute()

    def _show(self, res: PlanResult) -> None:
        """Render a result in steps, one turn of the event loop each; a newer result replaces the rest."""
        steps = self.plots.render_steps(res)
        self._render_steps = [lambda: (self.summary.show_result(res), steps[0]()), *steps[1:-1],
                              lambda: (steps[-1](), self._shown(res))]
        if not self._rendering:
            self._rendering = True
            QTimer.singleShot(0, self._render_next)

    def _render_next(self) -> None:
        if not self._render_steps:
            self._rendering = False
            return
        self._render_steps.pop(0)()
        QTimer.singleShot(0, self._render_next)

    def _shown(self, res: PlanResult) -> None:
        self.last_result = res
        q = res.request.quality
        trials = res.main.scenario.trials
        self.status.setText(
            f"{'Preview' if q.name == PREVIEW.name else 'Showing'}: {trials:,} trials at {res.main.scenario.gpus:,} GPUs "
            f"in {res.seconds * 1000:,.0f} ms"
        )
        self.resultsShown.emit()
        if self._preview_wanted:
            self._preview_wanted = False
            self.recompute(preview=True)
        elif self._full_wanted and q.name == PREVIEW.name:
            self._full_wanted = False
            self.recompute()

    def _compute_failed(self, message: str) -> None:
        self.status.setText(f"Computation failed: {message}")
        QMessageBox.warning(self, "Computation failed", message)

    def _progress(self, fraction: float) -> None:
        self.progress.setValue(int(fraction * 1000))

    def _busy(self, busy: bool) -> None:
        # Show progress and Cancel only for runs long enough to notice.
        if busy:
            QTimer.singleShot(400, self._show_progress_if_busy)
        else:
            self.progress.setVisible(False)
            self.cancel_button.setVisible(False)

    def _show_progress_if_busy(self) -> None:
        if self.compute.busy:
            self.progress.setVisible(True)
            self.cancel_button.setVisible(True)
            self.status.setText("Computing...")

    def _cancel(self) -> None:
        self.compute.cancel()
        self.status.setText("Cancelled; the plots show the last finished results.")

    # -- files -------------------------------------------------------------------------
    def _error(self, title: str, message: str) -> None:
        QMessageBox.critical(self, title, message)

    def _confirm_discard(self) -> bool:
        """True when it is fine to replace the current scenario (saved, discarded, or unchanged)."""
        if not self.dirty:
            return True
        answer = QMessageBox.question(
            self, "Unsaved changes", "The scenario has unsaved changes. Save them first?",
            QMessageBox.StandardButton.Save | QMessageBox.StandardButton.Discard | QMessageBox.StandardButton.Cancel,
            QMessageBox.StandardButton.Save,
        )
        if answer == QMessageBox.StandardButton.Save:
            return self.save()
        return answer == QMessageBox.StandardButton.Discard

    def new_scenario(self) -> None:
        if self._confirm_discard():
            self.set_scenario(load_preset("llama3-405b"))

    def load_preset(self, name: str) -> None:
        if self._confirm_discard():
            self.set_scenario(load_preset(name))

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
        self.set_scenario(sc, Path(path))
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
        sc = self.scenario()
        try:
            save(sc, path)
        except ScenarioError as exc:
            self._error("Cannot save scenario", str(exc))
            return False
        self._path = path
        self._saved_text = dumps(sc)
        self._add_recent(path)
        self._update_title()
        self.status.setText(f"Saved {path}")
        return True

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
        if isinstance(value, str):
            value = [value]
        return [str(v) for v in (value or [])]

    def _refresh_recent(self) -> None:
        self.recent_menu.clear()
        for p in self._recent():
            act = self.recent_menu.addAction(p)
            act.triggered.connect(lambda _=False, p=p: self.open_file(p))
        self.recent_menu.setEnabled(bool(self._recent()))

    # -- exports ---------------------------------------------------------------------------
    def export_plots_dialog(self) -> None:
        path, chosen = QFileDialog.getSaveFileName(self, "Export plots", self._dialog_dir("plots.png"),
                                                   "PNG image (*.png);;SVG drawing (*.svg)")
        if path:
            if not path.lower().endswith((".png", ".svg")):
                path += ".svg" if "svg" in chosen.lower() else ".png"
            self.export_plots_to(path)

    def export_plots_to(self, path: str | Path) -> list[Path]:
        try:
            written = export_plots(self.plots.widgets, path)
        except (OSError, ValueError) as exc:
            self._error("Cannot export plots", str(exc))
            return []
        self.status.setText(f"Exported {len(written)} plots beside {Path(path).name}")
        return written

    def export_results_dialog(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Export results", self._dialog_dir("results.csv"),
                                              "CSV (*.csv)")
        if path:
            self.export_results_to(path if path.lower().endswith(".csv") else path + ".csv")

    def export_results_to(self, path: str | Path) -> list[Path]:
        if self.last_result is None:
            self._error("Cannot export results", "There are no results yet.")
            return []
        try:
            written = export_results(self.last_result, path)
        except OSError as exc:
            self._error("Cannot export results", f"{path}: {exc.strerror or exc}")
            return []
        self.status.setText(f"Exported results to {written[0].name} and the two sweeps beside it")
        return written

    # -- baseline, help ---------------------------------------------------------------------
    def pin_baseline(self) -> None:
        if self.last_result is not None:
            self.plots.set_baseline(self.last_result)
            self.status.setText("Baseline pinned: it stays on every plot as a faint overlay")

    def clear_baseline(self) -> None:
        self.plots.set_baseline(None)

    def show_model(self) -> None:
        dlg = QDialog(self)
        dlg.setWindowTitle("Model and sources")
        dlg.resize(760, 640)
        text = QTextBrowser(dlg)
        text.setOpenExternalLinks(True)
        text.setHtml(model_html())
        QVBoxLayout(dlg).addWidget(text)
        dlg.show()

    def show_about(self) -> None:
        box = QMessageBox(self)
        box.setWindowTitle("About planner-gui")
        box.setIconPixmap(app_icon().pixmap(64, 64))
        box.setText(about_html())
        box.exec()

    # -- closing -----------------------------------------------------------------------------
    def closeEvent(self, event: QCloseEvent) -> None:  # noqa: N802 - Qt API
        if not self._confirm_discard():
            event.ignore()
            return
        self.settings.setValue("window/geometry", self.saveGeometry())
        self.settings.setValue("session/scenario", dumps(self.scenario()))
        self.settings.sync()
        self.compute.shutdown()
        event.accept()
