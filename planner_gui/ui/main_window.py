"""The main window: controls on the left, summary and plots on the right, menus around them.

One :class:`~planner_gui.core.session.inputs.Inputs` holds the scenario being edited; the controls write to
it and the window follows it: every change of a computed input asks the compute process for new
results (a quick preview, then the full run), and results that no longer match the inputs are marked
out of date.
"""

from __future__ import annotations

import dataclasses
import json
import logging
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import TypeVar

from PySide6.QtCore import QByteArray, QRect, QSettings, QSize, Qt, QTimer, Signal
from PySide6.QtGui import QAction, QCloseEvent, QGuiApplication, QKeySequence
from PySide6.QtWidgets import (
    QDialog,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QMessageBox,
    QProgressBar,
    QPushButton,
    QSplitter,
    QTabWidget,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from ..core.analysis.sweep import run_cost
from ..core.analysis.training import check_training_size
from ..core.files.presets import DEFAULT_PRESET, load_preset, preset_titles
from ..core.files.scenario_io import ScenarioError, validate
from ..core.model.scenario import Scenario
from ..core.model.specs import labelled
from ..core.session.inputs import COMPUTED_FIELDS, Inputs, describe_changes
from ..core.session.plan import FULL, PREVIEW, MainPart, PlanRequest, PlanResult
from ..core.util import fmt
from .collector import collect_on_gui_thread
from .compute import ComputeController
from .controls import ControlsPanel
from .docs import about_html, model_html
from .files import FileWindow
from .incident_dialog import ImportIncidentDialog
from .planning import PlanningPanel
from .plots import MAIN_STEPS, PlotsPanel, chain
from .rates_view import RatesOverRunView
from .resources import app_icon
from .summary import SummaryStrip

log = logging.getLogger(__name__)

__all__ = ["MainWindow"]

#: The smallest window that shows every control and plot unclipped (checked by the tests).
MIN_SIZE = (1024, 680)
#: Pinned scenarios at most (each has its own colour; see :data:`.plots.PIN_COLORS`).
MAX_PINNED = 6
#: A first run whose main simulation alone is estimated to take longer than this (seconds on the reference
#: machine) starts with a preview, as every change does, so a long full run is never a blank window.
START_PREVIEW_S = 0.5


QDialogT = TypeVar("QDialogT", bound=QDialog)


#: Room a window's frame takes around its contents (title bar, borders), at most, in pixels.
FRAME_ROOM = (16, 48)


def size_fits(size: QSize, room: QRect) -> bool:
    """Whether a window of ``size`` (its contents) and its frame fit in ``room``, and the size is one the
    window can take (at least :data:`MIN_SIZE`)."""
    return (
        MIN_SIZE[0] <= size.width() <= room.width() - FRAME_ROOM[0]
        and MIN_SIZE[1] <= size.height() <= room.height() - FRAME_ROOM[1]
    )


def _redo_keys() -> list[QKeySequence]:
    """Redo: the platform's keys and Ctrl+Shift+Z everywhere (Ctrl+Y on Windows is the platform's)."""
    keys = [*QKeySequence.keyBindings(QKeySequence.StandardKey.Redo)]
    shift_z = QKeySequence("Ctrl+Shift+Z")
    return keys if shift_z in keys else [*keys, shift_z]


def _run_text(res: PlanResult) -> str:
    sc, q = res.main.scenario, res.request.quality
    n = f"{sc.trials:,}"
    article = "an" if n.startswith("8") or n.split(",")[0] in ("11", "18") else "a"
    what = f"{article} {n}-trial preview" if q.name == PREVIEW.name else f"{n} trials"
    text = f"{what} at {sc.gpus:,} GPUs over {sc.days:g} days"
    if res.window_fraction < 1.0:  # a preview of a very long run simulates part of the window
        share = res.window_fraction
        part = f"{share:.0%}" if share >= 0.095 else f"{share:.1%}" if share >= 0.001 else f"{100 * share:.2g}%"
        text += f" (each trial {part} of it, scaled up)"
    if res.segments > 1:  # a preview on the general engine: the whole window, in stretches (docs/model.md 2.9)
        text += f" (the window in {res.segments} stretches side by side)"
    return text


#: The order a result's steps are drawn in (:meth:`MainWindow._render_next`): those its main run alone decides
#: first (a part has only those), with the headline numbers.
RENDER_ORDER = (*MAIN_STEPS, "gpus", "interval", "planning", "rates")


def _status_text(res: PlanResult) -> str:
    """What the status bar says about the results shown: a preview, or the full run."""
    took = f"computed {'earlier ' if res.from_cache else ''}in {res.seconds * 1000:,.0f} ms"
    if res.request.quality.name == PREVIEW.name:
        return f"Preview (approximate; the full run follows): {_run_text(res)}, {took}"
    return f"Showing: {_run_text(res)}, {took}"


class MainWindow(FileWindow):
    """The planner's window. ``resultsShown`` fires each time the plots show new results."""

    resultsShown = Signal()

    def __init__(self, scenario: Scenario | None = None, *, restore: bool = True) -> None:
        super().__init__()
        collect_on_gui_thread()  # worker threads must never run Qt destructors (see .collector)
        self.setObjectName("plannerMainWindow")
        self.setWindowIcon(app_icon())
        self.setMinimumSize(*MIN_SIZE)
        self.settings = QSettings()
        path: Path | None = None
        if scenario is None:
            session = self._restored_session() if restore else None
            scenario, path = session if session else (load_preset(DEFAULT_PRESET), None)
        self.inputs = Inputs(scenario, path=path)
        self.last_result: PlanResult | None = None
        self._preview_wanted = False
        self._full_wanted = False
        # The steps to draw the newest result (or part: see _show), each with its generation; those not run yet;
        # the place in RENDER_ORDER after the last step run; the result being drawn (None: a part alone).
        self._render_steps: dict[str, tuple[int, Callable[[], None]]] = {}
        self._render_todo: set[str] = set()
        self._render_at = 0
        self._render_result: PlanResult | None = None
        self._drawn: dict[str, int] = {}  # step -> the generation it last drew (from a part or a whole result)
        self._render_timer = QTimer(self)  # a zero timer, unlike QTimer.singleShot(0), lets timers run
        self._render_timer.setSingleShot(True)
        self._render_timer.setInterval(0)
        self._render_timer.timeout.connect(self._render_next)
        self._rendering = False
        self._stale_reason = ""
        self._refused = False
        self._copy_pending = False
        self._pin_pending = False
        self._planning_due: PlanResult | None = None  # a result the Planning tab will draw when chosen

        self.controls = ControlsPanel(self.inputs)
        self.summary = SummaryStrip(lambda usd: self.inputs.update(gpu_hour_cost_usd=usd))
        self.summary.set_price(scenario.gpu_hour_cost_usd)
        self.plots = PlotsPanel()
        self.rates_view = RatesOverRunView()
        self.planning = PlanningPanel()
        self.planning.set_price(scenario.gpu_hour_cost_usd)
        self.planning.set_lever_prices(scenario.lever_prices)
        self.planning.pricesEdited.connect(lambda prices: self.inputs.update(lever_prices=prices))
        self.planning.factorChanged.connect(lambda _factor: self.recompute())
        self.pins: list[tuple[str, PlanResult]] = []  # pinned scenarios, oldest first
        self.setCentralWidget(self._build_body())

        self.compute = ComputeController(self)
        self.compute.resultReady.connect(self._show)
        self.compute.partReady.connect(self._show_part)
        self.compute.failed.connect(self._compute_failed)
        self.compute.progress.connect(self._progress)
        self.compute.busyChanged.connect(self._busy)
        self.compute.gaveUp.connect(self._compute_gave_up)
        self.inputs.changed.connect(self._inputs_changed)
        self.inputs.historyChanged.connect(self._history_changed)
        self.controls.dragFinished.connect(self._drag_finished)

        self._build_status_bar()
        self._build_menus()
        self._history_changed()
        if not (restore and self._restore_geometry()):  # 1440 x 900, or the screen's room if that is less
            room = self.screen().availableGeometry()
            self.resize(max(min(1440, room.width()), MIN_SIZE[0]), max(min(900, room.height() - 40), MIN_SIZE[1]))
        self._update_title()
        QTimer.singleShot(0, self._first_run)

    def _restore_geometry(self) -> bool:
        """The window's remembered place and size, if the size fits the screen it opens on (a size
        remembered on a larger screen opened squeezed, its labels clipped): False when none fits."""
        geometry, size = self.settings.value("window/geometry"), self.settings.value("window/size")
        if not isinstance(geometry, QByteArray) or not isinstance(size, QSize):
            return False
        if not size_fits(size, self._room()) or not self.restoreGeometry(geometry):
            return False
        if not (self.isMaximized() or self.isFullScreen()):
            self.resize(size)  # the size remembered, which fits (the platform may have clamped it to another screen)
        return True

    def _room(self) -> QRect:
        """Where a window may be on the screen it opens on."""
        return self.screen().availableGeometry()

    # -- construction -------------------------------------------------------------------
    def _build_body(self) -> QWidget:
        right = QWidget()
        lay = QVBoxLayout(right)
        lay.setContentsMargins(4, 4, 4, 4)
        lay.addWidget(self.summary)
        self.banner = QWidget()
        self.banner.setObjectName("staleBannerBox")
        self.banner.setStyleSheet(
            "#staleBannerBox { background: #fff3cd; border: 1px solid #d9b44a; } QLabel { color: #3d2e00; }"
        )
        row = QHBoxLayout(self.banner)
        row.setContentsMargins(8, 3, 8, 3)
        self.stale_label = QLabel()
        self.stale_label.setObjectName("staleBanner")
        self.stale_label.setWordWrap(True)
        self.restart_button = QPushButton("Restart computation")
        self.restart_button.setObjectName("restartComputeButton")
        self.restart_button.clicked.connect(self._restart_compute)
        row.addWidget(self.stale_label, 1)
        row.addWidget(self.restart_button)
        self.banner.setVisible(False)
        lay.addWidget(self.banner)
        self.tabs = QTabWidget()
        self.tabs.setObjectName("resultTabs")
        self.tabs.setDocumentMode(True)
        self.tabs.addTab(self.plots, "Reliability")
        self.tabs.addTab(self.planning, "Planning")
        self.tabs.currentChanged.connect(self._tab_chosen)
        self.tabs.addTab(self.rates_view, "Rates over the run")
        lay.addWidget(self.tabs, 1)
        split = QSplitter(Qt.Orientation.Horizontal)
        split.addWidget(self.controls)
        split.addWidget(right)
        split.setStretchFactor(1, 1)
        split.setCollapsible(0, False)
        split.setCollapsible(1, False)
        split.setSizes([360, 1080])
        return split

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
        self._action(f, "&Import Incident Log...", self.import_incident_log_dialog, None, "actionImportIncidents")
        self._action(f, "Open S&tudy Results...", self.open_study_results_dialog, None, "actionOpenStudy")
        self._action(f, "Export &Plots (PNG, SVG)...", self.export_plots_dialog, "Ctrl+E", "actionExportPlots")
        self._action(f, "Export Results (&CSV)...", self.export_results_dialog, "Ctrl+Shift+E", "actionExportCsv")
        self._action(f, "Export &Report (HTML)...", self.export_report_dialog, "Ctrl+R", "actionExportReport")
        f.addSeparator()
        self._action(f, "&Quit", self.close, QKeySequence.StandardKey.Quit, "actionQuit")
        e = mb.addMenu("&Edit")
        self.undo_action = self._action(e, "&Undo", self.undo, QKeySequence.StandardKey.Undo, "undoAction")
        self.redo_action = self._action(e, "&Redo", self.redo, QKeySequence.StandardKey.Redo, "redoAction")
        self.redo_action.setShortcuts(_redo_keys())
        e.addSeparator()
        self._action(e, "&Copy Results as JSON", self.copy_results_json, "Ctrl+Shift+C", "copyResultsJsonAction")
        p = mb.addMenu("&Presets")
        for slug, title in preset_titles().items():  # the default first
            # (whole: the presets are ours, and a title cut in its middle read "2 warm t... a rack")
            self._action(p, fmt.clean(title, 160), lambda _=False, n=slug: self.load_preset(n), name=f"preset:{slug}")
        v = mb.addMenu("&View")
        self._action(v, "&Pin Scenario", self.pin_baseline, "Ctrl+B", "actionPinBaseline")
        self._action(v, "&Clear Pinned Scenarios", self.clear_baseline, "Ctrl+Shift+B", "actionClearBaseline")
        self._action(v, "Spare-Pool &Sizing...", self.show_spares_sizing, None, "actionSparesSizing")
        self._action(v, "&Repairs and Recovery Modes...", self.show_spares_modes, None, "actionSparesModes")
        self._action(v, "Recovery S&trategies...", self.show_strategies, None, "actionStrategies")
        h = mb.addMenu("&Help")
        self._action(h, "&Model and Sources", self.show_model, QKeySequence.StandardKey.HelpContents, "actionModel")
        self._action(h, "&Validation: Published Figures", self.show_validation, None, "actionValidation")
        self._action(h, "&About planner-gui", self.show_about, None, "actionAbout")
        self._refresh_recent()

    def show_spares_sizing(self) -> None:
        """Open the spare-pool sizing window for the scenario shown (planner_gui/ui/spares_view.py)."""
        from .spares_view import SparesDialog

        if self._raise_open(SparesDialog, lambda d: d.scenario == self.scenario()):
            return
        dlg = SparesDialog(self.scenario(), self)
        dlg.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dlg.show()

    def show_spares_modes(self) -> QDialog:
        """Open nodes in repair over time and restart vs continue (planner_gui/ui/spares_modes.py)."""
        from .spares_modes import SparesModesDialog

        found = self._raise_open(SparesModesDialog, lambda d: d.scenario == self.scenario())
        if found is not None:
            return found
        res = self.last_result if self.results_current() else None
        dlg = SparesModesDialog(self.scenario(), None if res is None else res.main, self)
        dlg.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dlg.show()
        return dlg

    def show_strategies(self) -> QDialog:
        """Open the recovery strategies side by side, following the scenario (planner_gui/ui/strategies_view.py)."""
        from .strategies_view import StrategiesDialog

        found = self._raise_open(StrategiesDialog, lambda _d: True)  # (it follows the scenario: one is enough)
        if found is not None:
            return found
        dlg = StrategiesDialog(self.inputs, self)
        dlg.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dlg.show()
        return dlg

    def _raise_open(self, kind: type[QDialogT], same: Callable[[QDialogT], bool]) -> QDialogT | None:
        """The open window of ``kind`` that shows what a new one would (``same``), brought to the front; None if there
        is none. A second click of a menu item raised a second window and a compute process of its own (twelve
        windows and nine processes for three clicks of four items)."""
        for dlg in self.findChildren(kind):
            if dlg.isVisible() and same(dlg):
                dlg.raise_()
                dlg.activateWindow()
                return dlg
        return None

    # -- scenario state --------------------------------------------------------------------
    def scenario(self) -> Scenario:
        """The scenario the window shows."""
        return self.inputs.scenario

    @property
    def dirty(self) -> bool:
        return self.inputs.dirty

    def set_scenario(self, sc: Scenario, path: Path | None = None, what: str = "") -> None:
        """Start editing ``sc`` (from ``path``, or untitled); ``what`` names the step in Edit > Undo."""
        self.inputs.load(sc, path=path, what=what)  # emits changed: the controls follow, a computation starts
        self._update_title()

    # -- undo ------------------------------------------------------------------------------
    def undo(self) -> None:
        """Edit > Undo: the inputs as they were before the last change (an open, a preset or a fit too)."""
        what = self.inputs.undo_text
        if self.inputs.undo():
            self.status.setText(f"Undid {fmt.clean(what, 120)}")

    def redo(self) -> None:
        """Edit > Redo: the last undone change again."""
        what = self.inputs.redo_text
        if self.inputs.redo():
            self.status.setText(f"Redid {fmt.clean(what, 120)}")

    def _history_changed(self) -> None:
        for act, word, text in (
            (self.undo_action, "&Undo", self.inputs.undo_text),
            (self.redo_action, "&Redo", self.inputs.redo_text),
        ):
            act.setEnabled(bool(text))
            act.setText(f"{word} {fmt.clean(text, 60).replace('&', '&&')}" if text else word)

    def _update_title(self) -> None:
        where = fmt.clean(self._path.name, 60) if self._path else "untitled"
        self.setWindowTitle(
            f"{where}{' *' if self.dirty else ''} - {fmt.clean(self.inputs.scenario.name, 80)} - planner-gui"
        )

    def _inputs_changed(self, changed: frozenset) -> None:
        """Progressive refinement: a quick low-trial preview first, then the full run.

        While a slider is dragged, previews run one at a time (the next starts when one arrives, and is
        computed while that one is drawn) and the full run waits for the hand to stop. Any other change
        starts its preview at once, abandoning whatever was running, and the full run follows it once the
        preview is shown.
        """
        self._update_title()
        if "gpu_hour_cost_usd" in changed:
            self.summary.set_price(self.inputs.scenario.gpu_hour_cost_usd)
            self.planning.set_price(self.inputs.scenario.gpu_hour_cost_usd)
        if "lever_prices" in changed:
            self.planning.set_lever_prices(self.inputs.scenario.lever_prices)
        if not changed & COMPUTED_FIELDS:
            return
        if not self.controls.dragging:
            self._preview_wanted = False
            self._full_wanted = True
            self.recompute(preview=True)
        elif self.compute.busy:
            self._preview_wanted = True
        else:
            self.recompute(preview=True)

    # -- computing ----------------------------------------------------------------------
    def _first_run(self) -> None:
        """The results of the inputs the window opens with: the full run, after a preview when it is long
        (a scenario remembered at the size limit would otherwise show nothing for a minute)."""
        try:
            slow = run_cost(validate(self.inputs.scenario)).seconds > START_PREVIEW_S
        except (ScenarioError, ValueError):
            slow = False  # recompute says why it cannot
        if slow:
            self._full_wanted = True
        self.recompute(preview=slow)

    def recompute(self, preview: bool = False) -> None:
        """Ask the compute process for results for the current inputs (full quality unless ``preview``)."""
        try:
            sc = validate(self.inputs.scenario)
            check_training_size(sc)  # the full run's time to train would be refused by the compute process
        except ScenarioError as exc:
            self._preview_wanted = self._full_wanted = False
            self._refused = True
            why = fmt.clean(labelled(str(exc)), 300)  # said as the window labels the inputs, not as file keys
            self._stale_reason = f"The current inputs cannot be computed: {why}"
            self.status.setText(f"Cannot compute: {why}")
            self._refresh_staleness()
            return
        self._stale_reason = ""
        self._refused = False
        self.compute.submit(sc, PREVIEW if preview else FULL, self.planning.factor.value())

    def _drag_finished(self) -> None:
        """The full run of the inputs the hand stopped at; first their preview, unless the plots show it or it is
        being computed (on a large scenario, previews lag the slider: the plots would show the inputs of an
        earlier preview, or of before the drag, until the full run came, a minute or more)."""
        self.inputs.close_step()  # the next drag is a step of its own
        self._preview_wanted = False
        self._full_wanted = False
        current = self.inputs.scenario.simulated()  # (as results_current compares; a refused one: the preview says why)
        shown, pending = self.last_result, self.compute.pending
        if shown is not None and shown.request.scenario.simulated() == current:
            self.recompute()
        elif isinstance(pending, PlanRequest) and pending.scenario.simulated() == current:
            self._full_wanted = True  # its preview is on its way: the full run follows it
        else:
            self._full_wanted = True
            self.recompute(preview=True)

    def _show_part(self, part: MainPart) -> None:
        """Draw what a full run's main run alone decides (the headline numbers, the components, the histogram
        and the time breakdown) while the compute process computes its sweeps (seconds, on a large scenario);
        the whole result, when it comes, has only its sweeps' plots left to draw. A result still being drawn
        keeps its sweeps' steps.

        Only where the other plots show the same inputs (their preview): beside plots of other inputs, the part
        would show two scenarios at once; the whole result then draws everything."""
        shown = self._render_result or self.last_result
        if shown is None or shown.request.scenario.simulated() != part.request.scenario.simulated():
            return
        self._start_render(part)

    def _show(self, res: PlanResult) -> None:
        """Render a result in steps, one plot (or two) per turn of the event loop, so input and timers are
        handled between them; those its main run decides are left out if its part drew them already.

        A newer result takes over from the next step: plots already drawn from the older one are drawn
        again after the others, so however often results come, every plot shows the newest within one
        round. While a slider is dragged, its next preview starts now, so it is computed while this one
        is drawn.
        """
        self._start_render(res)
        if self._preview_wanted:  # a slider is being dragged: its next preview is computed meanwhile
            self._preview_wanted = False
            self.recompute(preview=True)

    def _start_render(self, res: PlanResult | MainPart) -> None:
        gen = res.request.generation
        steps = dict(self.plots.render_steps(res))
        steps["components"] = chain(partial(self.summary.show_result, res), steps["components"])
        if isinstance(res, PlanResult):
            self._render_result = res
            steps["planning"] = partial(self._show_planning, res)
            steps["rates"] = partial(self.rates_view.show_result, res)
            self._render_steps = {k: (gen, f) for k, f in steps.items()}
            # (a whole result's main run is its part's: what the part drew stands)
            self._render_todo = {k for k in steps if not (k in MAIN_STEPS and self._drawn.get(k) == gen)}
        else:
            self._render_steps.update({k: (gen, f) for k, f in steps.items()})
            self._render_todo |= set(steps)
        if not self._rendering:
            self._rendering = True
            self._render_timer.start()

    def _render_next(self) -> None:
        """Draw the next plot that does not show the newest result yet."""
        todo = self._render_todo
        if todo:
            # in order, from where it was
            name = min(todo, key=lambda k: (RENDER_ORDER.index(k) - self._render_at) % len(RENDER_ORDER))
            todo.discard(name)
            self._render_at = RENDER_ORDER.index(name) + 1
            gen, step = self._render_steps[name]
            self._drawn[name] = gen
            step()
        if todo:
            self._render_timer.start()  # a timer: events and other timers come first
            return
        self._rendering = False
        self._render_at = 0
        res, self._render_result = self._render_result, None
        if res is not None:
            self._shown(res)
        elif self.progress.isVisible():  # a part is drawn: say which plots show what
            self.status.setText(self._computing_text())

    def _show_planning(self, res: PlanResult) -> None:
        """Draw the Planning tab now if it is the tab shown, else when it is chosen (it takes 15-25 ms)."""
        if self.tabs.currentWidget() is self.planning:
            self._planning_due = None
            self.planning.show_result(res)
        else:
            self._planning_due = res

    def _tab_chosen(self, index: int) -> None:
        if self.tabs.widget(index) is self.planning and self._planning_due is not None:
            res, self._planning_due = self._planning_due, None
            self.planning.show_result(res)

    def _shown(self, res: PlanResult) -> None:
        self.last_result = res
        if res.request.quality.name != PREVIEW.name:
            self._show_comparison()
        self.status.setText(_status_text(res))
        if self._full_wanted and res.request.quality.name == PREVIEW.name:
            # Only now: computing it while the preview is drawn would slow the drawing down more than
            # it gains (on a machine with 2 cores, the compute process and painting share the memory).
            self._full_wanted = False
            self.recompute()
        if not (self.controls.dragging and res.request.quality.name == PREVIEW.name):
            # While a slider is dragged, previews are what the plots should show; the banner would only
            # flash (and lay the plots out again) between one preview and the next.
            self._refresh_staleness()
        if self._copy_pending and self.results_current():
            self._copy_pending = False
            self.copy_results_json()
        if self._pin_pending and self.results_current():
            self._pin_pending = False
            self.pin_baseline()
        self.resultsShown.emit()

    def results_current(self) -> bool:
        """Whether the results shown are the full run for the current inputs."""
        res = self.last_result
        return (
            res is not None
            and res.request.quality.name == FULL.name
            and res.request.scenario.simulated() == self.inputs.scenario.simulated()
        )

    def _refresh_staleness(self) -> None:
        """Mark the plots out of date when they show other inputs and nothing newer is on its way."""
        waiting = self.compute.busy or self._preview_wanted or self._full_wanted
        if self.results_current() or (waiting and not self.compute.gave_up):
            self.banner.setVisible(False)
            return
        reason = self._stale_reason or "The run for the current inputs did not finish."
        self.stale_label.setText(f"Out of date: {self._shown_statement()}. {reason}")
        self.restart_button.setText("Restart computation" if self.compute.gave_up else "Run again")
        self.restart_button.setVisible(self.compute.gave_up or not self._refused)  # a refusal would repeat
        self.banner.setVisible(True)

    def _shown_statement(self) -> str:
        """Which run the results on screen are, in one phrase used everywhere it is said (the banner, the
        status bar after a cancel, the comparison table's heading): "these results show an 8-trial preview
        at 16,384 GPUs over 54 days, a quick preview"."""
        res = self.last_result
        if res is None:
            return "there are no results yet"
        return f"these results show {_run_text(res)}{self._shown_difference(res)}"

    def _shown_difference(self, res: PlanResult) -> str:
        """How the run ``res`` differs from the full run of the current inputs ("" when it is that run)."""
        differ = describe_changes(res.request.scenario, self.inputs.scenario)
        if differ:
            return f", for other inputs ({differ})"
        if res.request.scenario.simulated() != self.inputs.scenario.simulated():
            return ", for other inputs"
        return ", a quick preview" if res.request.quality.name == PREVIEW.name else ""

    def _compute_failed(self, message: str) -> None:
        self._preview_wanted = self._full_wanted = False
        self._stale_reason = f"The run for the current inputs failed: {fmt.clean(message, 300)}"
        self.status.setText(f"Computation failed: {fmt.clean(message, 300)}")
        self._refresh_staleness()
        QMessageBox.warning(self, "Computation failed", fmt.clean(message, 500))

    def _compute_gave_up(self, message: str) -> None:
        self._preview_wanted = self._full_wanted = False
        self._stale_reason = fmt.clean(message, 300)
        self.status.setText(fmt.clean(message, 300))
        self._refresh_staleness()

    def _restart_compute(self) -> None:
        """The banner's button: restart a compute process that gave up, or run the current inputs again."""
        self._stale_reason = ""
        if self.compute.gave_up:
            self.compute.restart()
        self._full_wanted = False
        self.recompute()

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
            self.status.setText(self._computing_text())

    def _computing_text(self) -> str:
        """What the status bar says while a run is computed: the run, and what the plots show meanwhile."""
        res, pending = self.last_result, self.compute.pending
        if not isinstance(pending, PlanRequest) or res is None:
            return "Computing..."
        if pending.quality.name != FULL.name or res.request.scenario.simulated() != pending.scenario.simulated():
            return "Computing..."
        if self._drawn.get(MAIN_STEPS[0]) == pending.generation:  # its part is drawn
            shown = "a preview" if res.request.quality.name == PREVIEW.name else "the run before"
            return (
                "Computing the sweeps of the full run; the headline numbers, components, histogram and time "
                f"breakdown show its main run, the other plots {shown}"
            )
        if res.request.quality.name == PREVIEW.name:
            return "Computing the full run; the plots show a preview (approximate)"
        return "Computing..."

    def _cancel(self) -> None:
        self.compute.cancel()
        self._preview_wanted = self._full_wanted = False
        self._stale_reason = "The run for the current inputs was cancelled."
        self.status.setText(f"Cancelled: {self._shown_statement()}.")
        self._show_comparison()  # the table's current column is the run the cards and plots show
        self._refresh_staleness()

    # -- results out -----------------------------------------------------------------------
    def copy_results_json(self) -> None:
        """Put the results on the clipboard as the JSON of ``planner-gui run --json`` for the current
        inputs; if the full run for them is not shown yet, as soon as it is."""
        if not self.results_current():
            self._copy_pending = True
            self.status.setText("Copying the results as soon as the full run for the current inputs is shown...")
            if not (self.compute.busy or self._full_wanted):
                self.recompute()
            return
        # The run is for these inputs; only the name and the price may have changed since (neither is computed).
        assert self.last_result is not None  # results_current() says so
        doc = dataclasses.replace(self.last_result.main, scenario=self.inputs.scenario)
        QGuiApplication.clipboard().setText(json.dumps(doc.to_json_dict(), indent=2, allow_nan=False))
        self.status.setText("Copied the results as JSON")

    def pin_baseline(self) -> None:
        """Pin the results shown: they stay on every plot in their own colour, the summary compares with
        the first pinned, and the Planning tab's table lists them side by side. At most
        :data:`MAX_PINNED`; pinning another drops the oldest."""
        if self.last_result is None:
            return
        res = self.last_result
        if res.request.quality.name == PREVIEW.name and (self.compute.busy or self._full_wanted):
            # A preview is a few trials: pin the full run it leads to, once it is shown.
            self._pin_pending = True
            self.status.setText("Pinning as soon as the full run for the current inputs is shown...")
            return
        if self.results_current():  # the name may have changed since the run (names are not computed)
            res = dataclasses.replace(res, main=dataclasses.replace(res.main, scenario=self.inputs.scenario))
        label = res.main.scenario.name
        taken = {name for name, _ in self.pins}
        k = 2
        while label in taken:
            label, k = f"{res.main.scenario.name} ({k})", k + 1
        self.pins = [*self.pins, (label, res)][-MAX_PINNED:]
        self._show_pins()
        self.status.setText(
            f"Pinned {fmt.clean(label, 60)}: it stays on every plot ({len(self.pins)} pinned; "
            "the Planning tab compares them)"
        )

    def clear_baseline(self) -> None:
        """Unpin every pinned scenario."""
        self.pins = []
        self._pin_pending = False
        self._show_pins()
        self.status.setText("No scenario pinned")

    def _show_pins(self) -> None:
        self.plots.set_pinned(self.pins)
        self.summary.set_baseline(self.pins[0][1] if self.pins else None)
        self._show_comparison()

    def _show_comparison(self) -> None:
        """The current results beside the pinned ones, in the Planning tab."""
        current = self.last_result
        if current is None:
            return
        results = [current, *(r for _, r in self.pins)]
        shown = (
            "current" if self.results_current() else f"shown ({_run_text(current)}{self._shown_difference(current)})"
        )
        labels = [f"{shown}: {self.inputs.scenario.name}", *(label for label, _ in self.pins)]
        self.planning.show_comparison(results, labels)

    # -- incident logs ---------------------------------------------------------------------------
    def import_incident_log_dialog(self) -> None:
        """Pick an incident log (CSV), then fit it and offer it as the scenario (see :mod:`.incident_dialog`)."""
        path, _ = QFileDialog.getOpenFileName(
            self, "Import incident log", self._dialog_dir(), "Incident logs (*.csv *.txt);;All files (*)"
        )
        if path:
            self.import_incident_log(path)

    def import_incident_log(self, path: str | Path) -> ImportIncidentDialog:
        """Open the fit of ``path``; "Use as scenario" makes it the scenario being edited (untitled)."""
        dlg = ImportIncidentDialog(self, path, self.inputs.scenario)
        dlg.accepted.connect(lambda: self._use_fit(dlg))
        dlg.open()
        return dlg

    def _use_fit(self, dlg: ImportIncidentDialog) -> None:
        if dlg.scenario is None or not self._confirm_discard():
            return
        what = f"rates fitted from {fmt.clean(Path(dlg.path).name, 60)}"
        self.inputs.load(dlg.scenario, saved=False, what=what)  # untitled and unsaved: closing asks first
        self._update_title()
        self.status.setText(f"Using the rates fitted from {fmt.clean(Path(dlg.path).name, 60)}")

    # -- design studies ----------------------------------------------------------------------------
    def open_study_results_dialog(self) -> None:
        """Pick a study's results (Parquet or CSV) and show them (see :mod:`.study_view`)."""
        from .study_view import pick_study_file  # the study's packages load only when one is opened

        path = pick_study_file(self, self._dialog_dir())
        if path:
            self.open_study_results(path)

    def open_study_results(self, path: str | Path) -> QWidget:
        from .study_view import open_study

        return open_study(path, self)

    # -- help ------------------------------------------------------------------------------
    def show_model(self) -> None:
        self._show_page("modelDialog", "Model and sources", (760, 640), lambda text: text.setHtml(model_html()))

    def show_validation(self) -> None:
        """The published figures the model reproduces (docs/validation.md, from
        :mod:`planner_gui.core.analysis.validation`)."""
        from ..core.analysis.validation import markdown

        title = "Validation: published figures the model reproduces"
        self._show_page("validationDialog", title, (900, 680), lambda text: text.setMarkdown(markdown()))

    def _show_page(self, name: str, title: str, size: tuple[int, int], fill: Callable[[QTextBrowser], None]) -> None:
        """A page of text in a dialog of its own (``fill`` writes it), raised if it is already open."""
        found = self.findChild(QDialog, name)
        if found is not None and found.isVisible():
            found.raise_()
            found.activateWindow()
            return
        dlg = QDialog(self)
        dlg.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dlg.setObjectName(name)
        dlg.setWindowTitle(title)
        dlg.resize(*size)
        text = QTextBrowser(dlg)
        text.setOpenExternalLinks(True)
        fill(text)
        QVBoxLayout(dlg).addWidget(text)
        dlg.show()

    def show_about(self) -> None:
        box = QMessageBox(self)
        box.setWindowTitle("About planner-gui")
        box.setIconPixmap(app_icon().pixmap(64, 64))
        box.setText(about_html())
        box.exec()

    # -- closing -----------------------------------------------------------------------------
    def closeEvent(self, event: QCloseEvent) -> None:
        if not self._confirm_discard():
            event.ignore()
            return
        self.settings.setValue("window/geometry", self.saveGeometry())
        self.settings.setValue("window/size", self.size())
        self._remember_session()
        self.settings.sync()
        self.compute.shutdown()
        event.accept()
