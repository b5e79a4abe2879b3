"""File > Import Incident Log: fit a log's rates (in a compute process), show the fit, use it as the scenario.

The dialog asks for what the fit needs beside the file: the GPUs the log watched (typed: no default, since
the scenario's GPUs are the cluster planned, not the one the log came from; until then the file is only read,
so a bad one is said at once), the prior the log is combined with (Llama 3 by default, as on the command
line: :mod:`~planner_gui.core.incidents.prior`), and optionally the window. It fits with
:func:`~planner_gui.core.incidents.fit_log` in a compute process of its own (:class:`.jobs.JobRunner`, the job
:func:`planner_gui.core.session.jobs.incident_fit`; a log at the size limit takes about 2 s), and
shows what ``planner-gui fit`` reports: each component's rate with its 90 %
interval, the window, the trend verdict and the Weibull shape. "Use as scenario" gives the current
scenario with the log's components (:meth:`~planner_gui.core.incidents.FitResult.scenario`), and, if
asked, the fit's trend carried on as the rate profile of the run, which starts where the log ends.
Any problem with the file is shown in the dialog, in one line.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QProgressBar,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from ..core.files.scenario_io import ScenarioError, validate
from ..core.incidents import (
    DEFAULT_PRIOR_WEIGHT,
    LEVEL,
    ComponentFit,
    FitResult,
    IncidentLogError,
    Prior,
    llama3_prior,
    parse_time,
    profile_from_fit,
)
from ..core.model.scenario import Scenario
from ..core.model.specs import LIMITS
from ..core.util import fmt
from .jobs import JobRunner
from .theme import mark_secondary
from .widgets import ComboBox, SpinBox

__all__ = ["ImportIncidentDialog", "fitted_scenario"]

COLUMNS = (
    "Component",
    "Category",
    "Count",
    "Rate / 1,000 GPU-days",
    f"{LEVEL:.0%} interval",
    "Log alone",
    "Prior's share",
    "Llama 3",
)
#: The priors offered: their labels and what they are (None: the log alone).
PRIOR_CHOICES: tuple[tuple[str, Prior | None], ...] = (
    (f"Llama 3 Table 5, weight {DEFAULT_PRIOR_WEIGHT:g}", llama3_prior()),
    ("None: the log alone", None),
)


def _per_1000_days(rate: float | None) -> str:
    return "" if rate is None else f"{rate * 24_000:.3g}"


def fitted_scenario(fit: FitResult, base: Scenario, with_trend: bool) -> Scenario:
    """``base`` with the log's rates (and, if ``with_trend``, its power law carried on over the run, which
    starts where the log ends). Raises :class:`ScenarioError` when the result is out of range."""
    sc = fit.scenario(base)
    if with_trend:
        try:
            profile = profile_from_fit(fit, sc.days, start_day=fit.hours / 24.0)
        except ValueError as exc:
            raise ScenarioError(str(exc)) from None
        sc = validate(sc.replace(rate_profile=profile))
    return sc


class ImportIncidentDialog(QDialog):
    """Fit an incident log and offer it as the scenario. ``accepted`` means :attr:`scenario` is set."""

    def __init__(self, parent: QWidget | None, path: str | Path, base: Scenario) -> None:
        super().__init__(parent)
        self.setObjectName("importIncidentDialog")
        self.setWindowTitle("Import incident log")
        self.resize(820, 620)
        self.path, self.base = Path(path), base
        self.fit: FitResult | None = None
        self.scenario: Scenario | None = None
        self.error = ""
        self._jobs = JobRunner(self, self._job_done)  # the newest fit asked for is the one delivered

        lay = QVBoxLayout(self)
        head = QLabel(f"<b>{fmt.clean(self.path.name, 80)}</b>")
        head.setTextFormat(Qt.TextFormat.RichText)
        lay.addWidget(head)
        form = QFormLayout()
        self.gpus = SpinBox()
        self.gpus.setObjectName("fitGpusSpin")
        hi = LIMITS["gpus"][1]
        self.gpus.setRange(0, int(hi))  # 0: not typed yet
        self.gpus.setSpecialValueText("type it")
        self.gpus.setGroupSeparatorShown(True)
        self.gpus.setValue(0)
        self.gpus.setToolTip(
            "GPUs in the cluster the log watched (not the cluster you plan): each rate is its count over these "
            "GPUs x the window. No default: the fit waits until it is typed."
        )
        self.prior = ComboBox()
        self.prior.setObjectName("fitPriorCombo")
        for label, _prior in PRIOR_CHOICES:
            self.prior.addItem(label)
        self.prior.setToolTip(
            "What is known before the log, combined with it cause by cause: the prior's evidence (Llama 3: each "
            f"cause's count over 16,384 GPUs x 54 days) counts at weight {DEFAULT_PRIOR_WEIGHT:g}, so a cause the "
            "log never saw keeps a rate above 0 and a long log outweighs the prior (planner-gui fit --prior)."
        )
        self.start = QLineEdit()
        self.start.setObjectName("fitStartEdit")
        self.start.setPlaceholderText("the first incident (ISO 8601, e.g. 2025-01-06)")
        self.end = QLineEdit()
        self.end.setObjectName("fitEndEdit")
        self.end.setPlaceholderText("the last incident (ISO 8601)")
        for edit in (self.start, self.end):
            edit.setToolTip(
                "The window the log watched. Left empty: the first or last incident, which makes the window too "
                "short and the rates high by about 2/(n-1) for n incidents."
            )
        form.addRow("GPUs the log watched", self.gpus)
        self.gpus_note = QLabel()
        self.gpus_note.setObjectName("fitGpusNote")
        self.gpus_note.setWordWrap(True)
        mark_secondary(self.gpus_note)
        form.addRow("", self.gpus_note)
        self._note_gpus()
        form.addRow("Prior", self.prior)
        form.addRow("Window start", self.start)
        form.addRow("Window end", self.end)
        lay.addLayout(form)
        row = QHBoxLayout()
        self.fit_button = QPushButton("Fit again")
        self.fit_button.setObjectName("fitButton")
        self.fit_button.setToolTip("Fit the log with these GPUs and window")
        self.fit_button.clicked.connect(self.start_fit)
        # An edit makes the fit shown stale at once (it cannot be used) and fits again once typing stops.
        self._refit = QTimer(self)
        self._refit.setSingleShot(True)
        self._refit.setInterval(500)
        self._refit.timeout.connect(self.start_fit)
        self.gpus.valueChanged.connect(self._edited)
        self.gpus.valueChanged.connect(self._note_gpus)
        self.prior.currentIndexChanged.connect(self._edited)
        self.start.textEdited.connect(self._edited)
        self.end.textEdited.connect(self._edited)
        self.busy = QProgressBar()
        self.busy.setRange(0, 0)
        self.busy.setMaximumWidth(160)
        self.status = QLabel()
        self.status.setObjectName("fitStatus")
        self.status.setWordWrap(True)
        row.addWidget(self.fit_button)
        row.addWidget(self.busy)
        row.addWidget(self.status, 1)
        lay.addLayout(row)

        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setObjectName("fitTable")
        self.table.setHorizontalHeaderLabels(list(COLUMNS))
        self._fit_columns()  # each column as wide as its header until a fit fills it
        self.table.verticalHeader().setVisible(False)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setToolTip(
            f"Rates in interruptions per 1,000 GPU-days: the log combined with the prior; the interval holds the rate "
            f"with {LEVEL:.0%} probability (Jeffreys: Gamma with shape count + 1/2, the prior's weighted count and "
            "exposure added to the log's); log alone: its count over its GPU-hours; prior's share: the prior's "
            "weight in the rate (its share of the evidence, the GPU-hours); Llama 3: the rate of that cause in "
            "Llama 3's Table 5."
        )
        lay.addWidget(self.table, 1)
        self.details = QLabel()
        self.details.setObjectName("fitDetails")
        self.details.setWordWrap(True)
        self.details.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        lay.addWidget(self.details)
        self.with_trend = QCheckBox("Also carry the log's trend on over the run, as its rate profile")
        self.with_trend.setObjectName("fitTrendCheck")
        self.with_trend.setToolTip(
            "The power law fitted to the log (MIL-HDBK-189), continued from the log's end: the run is taken to "
            "start where the log ends. Off: the rates are the log's averages, constant over the run."
        )
        lay.addWidget(self.with_trend)
        self.keeps = QLabel()
        self.keeps.setWordWrap(True)
        mark_secondary(self.keeps)
        lay.addWidget(self.keeps)
        buttons = QDialogButtonBox()
        self.use_button = buttons.addButton("Use as scenario", QDialogButtonBox.ButtonRole.AcceptRole)
        self.use_button.setObjectName("useFitButton")
        cancel = buttons.addButton(QDialogButtonBox.StandardButton.Cancel)
        cancel.setObjectName("cancelFitButton")
        for button in (self.use_button, cancel, self.fit_button):
            button.setAutoDefault(False)  # Enter in a box fits again (keyPressEvent); it never accepts
            button.setDefault(False)
        buttons.accepted.connect(self._use)
        buttons.rejected.connect(self.reject)
        lay.addWidget(buttons)
        self._show_fit(None)
        self.start_fit()

    # -- fitting --------------------------------------------------------------------------------
    def _window(self) -> tuple[datetime | None, datetime | None]:
        out: list[datetime | None] = []
        for edit, what in ((self.start, "Window start"), (self.end, "Window end")):
            text = edit.text().strip()
            if not text:
                out.append(None)
                continue
            try:
                out.append(parse_time(text)[0])
            except ValueError as exc:
                raise IncidentLogError(f"{what}: '{fmt.clean(text, 40)}' {exc}") from None
        return out[0], out[1]

    def _note_gpus(self, *_: object) -> None:
        """The hint under the GPUs: what the typed count means, or that the fit waits for it."""
        n = int(self.gpus.value())
        if n <= 0:
            self.gpus_note.setText(
                "The size of the cluster the log came from, not the cluster you plan: the fit waits for it."
            )
        else:
            self.gpus_note.setText(f"Each rate is its count over {n:,} GPUs x the window.")

    def _prior(self) -> Prior | None:
        return PRIOR_CHOICES[max(self.prior.currentIndex(), 0)][1]

    def _edited(self, *_: object) -> None:
        """The GPUs or the window changed: the fit shown no longer matches them, so it is withdrawn (and
        "Use as scenario" disabled) until the new fit, which starts when typing pauses."""
        self._jobs.cancel()  # a fit running for the old inputs is dropped
        self.fit = None
        self._show_fit(None)
        self.status.setText("Inputs changed: fitting again...")
        self.status.setStyleSheet("")
        self._refit.start()

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            self._refit.stop()
            self.start_fit()  # Enter fits with what the boxes say now; it never uses the fit
            event.accept()
            return
        super().keyPressEvent(event)

    def start_fit(self) -> None:
        """Fit the log in the dialog's compute process; the dialog stays responsive and shows the outcome when it
        comes. Asked again meanwhile, the newest request runs once the one running ends (its outcome dropped), so
        two fits of a large log never compete for the processor."""
        self._refit.stop()
        gpus = int(self.gpus.value())
        try:
            start, end = self._window()
        except IncidentLogError as exc:
            self._jobs.cancel()
            self._fitted(exc)
            return
        self.fit = None
        self._show_fit(None)
        self.busy.setVisible(True)
        self.status.setText("Fitting..." if gpus > 0 else "Reading the log...")
        self.status.setStyleSheet("")
        # Without the GPUs, the log is only read (with the largest cluster it may come from): its outcome says
        # whether it can be used, never a fit to use.
        self._jobs.run("incident_fit", str(self.path), gpus, start, end, self._prior())

    @property
    def fitting(self) -> bool:
        """Whether a fit is running (or waiting to run)."""
        return self._jobs.busy

    def _job_done(self, request: int, value: object) -> None:
        if request == self._jobs.request:
            self._fitted(value)

    def _fitted(self, outcome: object) -> None:
        """Show a fit's outcome: ``("fit" or "read", the fit)``, or why the log cannot be used."""
        self.busy.setVisible(False)
        kind, fit = outcome if isinstance(outcome, tuple) else ("", None)
        if kind == "read":
            self.fit, self.error = None, ""
            total = fit.total.count
            self.status.setText(
                f"{total:,} incidents read. Type the GPUs the log watched (the cluster it came from) to fit them."
            )
            self.status.setStyleSheet("")
            self._show_fit(None)
            return
        if isinstance(fit, FitResult):
            self.fit, self.error = fit, ""
            self.status.setText(f"{fit.total.count:,} incidents of {len(fit.components)} components")
            self.status.setStyleSheet("")
        else:
            self.fit, self.error = None, fmt.clean(str(outcome), 400)
            self.status.setText(f"Cannot use this log: {self.error}")
            self.status.setStyleSheet("color: #b00020;")
        self._show_fit(self.fit)

    # -- showing --------------------------------------------------------------------------------
    def _show_fit(self, fit: FitResult | None) -> None:
        self.use_button.setEnabled(fit is not None)
        self.with_trend.setEnabled(fit is not None and fit.power_law.shape is not None)
        if fit is None:
            self.table.setRowCount(0)
            self._fit_columns()  # no rows: each column as wide as its header
            self.details.setText("")
            self.keeps.setText("")
            return
        rows = [*fit.components, fit.total]
        self.table.setRowCount(len(rows))
        for r, c in enumerate(rows):
            self._fill_row(r, c)
        self._fit_columns()
        start = "given" if fit.start_given else "the first incident"
        end = "given" if fit.end_given else "the last incident"
        pl = fit.power_law
        lines = [
            f"Window: {fit.window_text('start')} ({start}) to {fit.window_text('end')} ({end}): "
            f"{fmt.duration_hours(fit.hours)}, {fmt.compact(fit.exposure_gpu_hours)} GPU-hours.",
            f"Trend: {fit.trend.verdict}"
            + (
                f" (Laplace U = {fit.trend.statistic:+.2f}; MIL-HDBK-189 p = {pl.p_value:.2g})"
                if pl.p_value is not None and fit.trend.statistic is not None
                else ""
            ),
            fit.weibull.verdict[0].upper() + fit.weibull.verdict[1:],
            *(f"Note: {n}" for n in fit.notes),
        ]
        self.details.setText("\n".join(fmt.clean(line, 400) for line in lines))
        self.keeps.setText(
            f"Use as scenario: these components and rates, with the evidence behind them (for rate uncertainty); "
            f"GPUs ({self.base.gpus:,}), days ({self.base.days:g}) and every other input stay those of "
            f"{fmt.clean(self.base.name, 60)}."
        )

    def _fit_columns(self) -> None:
        """Each column as wide as its header and cells, the first (the names) taking the width left."""
        self.table.resizeColumnsToContents()
        self.table.horizontalHeader().setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)

    def _fill_row(self, r: int, c: ComponentFit) -> None:
        cells = (
            fmt.clean(c.name, 60),
            fmt.clean(c.category, 40),
            f"{c.count:,}",
            _per_1000_days(c.rate_per_gpu_hour),
            f"{_per_1000_days(c.rate_low)}-{_per_1000_days(c.rate_high)}",
            _per_1000_days(c.log_rate),
            fmt.percent(c.prior_share, 0),
            _per_1000_days(c.llama3_rate),
        )
        for col, text in enumerate(cells):
            item = QTableWidgetItem(text)
            if col >= 2:
                item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            self.table.setItem(r, col, item)

    def _use(self) -> None:
        if self.fit is None:
            return
        try:
            self.scenario = fitted_scenario(self.fit, self.base, self.with_trend.isChecked())
        except ScenarioError as exc:
            self.status.setText(f"Cannot use this fit: {fmt.clean(str(exc), 300)}")
            self.status.setStyleSheet("color: #b00020;")
            return
        self.accept()

    def done(self, result: int) -> None:
        self._jobs.shutdown()  # a fit still running is dropped, and its process stops
        super().done(result)
