"""The summary strip above the plots: the four numbers a planner reads first."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QDoubleSpinBox, QFrame, QGridLayout, QHBoxLayout, QLabel, QVBoxLayout, QWidget

from ..core import fmt
from ..core.model import DEFAULT_NOTES
from ..core.results import summarize
from .compute import PlanResult

__all__ = ["SummaryStrip"]


class _Block(QFrame):
    def __init__(self, title: str, name: str, tooltip: str) -> None:
        super().__init__()
        self.setFrameShape(QFrame.Shape.StyledPanel)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(8, 4, 8, 4)
        lay.setSpacing(0)
        head = QLabel(title)
        head.setStyleSheet("color: palette(mid);")
        self.value = QLabel("...")
        self.value.setObjectName(name)
        font = self.value.font()
        font.setPointSizeF(font.pointSizeF() * 1.5)
        font.setBold(True)
        self.value.setFont(font)
        self.detail = QLabel("")
        self.detail.setObjectName(name + "Detail")
        self.detail.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        lay.addWidget(head)
        lay.addWidget(self.value)
        lay.addWidget(self.detail)
        self.extra = QHBoxLayout()
        lay.addLayout(self.extra)
        self.setToolTip(tooltip)


class SummaryStrip(QWidget):
    """Interruptions, time between them, goodput and lost GPU-hours with their cost."""

    priceChanged = Signal(float)

    def __init__(self) -> None:
        super().__init__()
        grid = QGridLayout(self)
        grid.setContentsMargins(0, 0, 0, 0)
        self.interruptions = _Block("Unplanned interruptions", "summaryInterruptions",
                                    "Monte Carlo mean over trials, with the 5th-95th percentile range.")
        self.every = _Block("Time between interruptions", "summaryEvery",
                            "Mean time between unplanned interruptions of the whole job (1 / total rate).")
        self.goodput = _Block("Goodput", "summaryGoodput",
                              "Compute time never rolled back / wall-clock window (Meta's 'effective training "
                              "time'): Monte Carlo mean, 5th-95th percentile, and the exact expectation.")
        self.lost = _Block("GPU-hours not spent training", "summaryLost",
                           "GPUs x (window - useful compute), and its cost at the price per GPU-hour. "
                           + DEFAULT_NOTES["gpu_hour_cost_usd"])
        self.price = QDoubleSpinBox()
        self.price.setObjectName("priceSpin")
        self.price.setRange(0, 10_000)
        self.price.setDecimals(2)
        self.price.setPrefix("$")
        self.price.setSuffix(" / GPU-h")
        self.price.setKeyboardTracking(False)
        self.price.setToolTip(DEFAULT_NOTES["gpu_hour_cost_usd"])
        self.lost.extra.addWidget(self.price)
        self.price.valueChanged.connect(self._price_changed)
        for i, b in enumerate((self.interruptions, self.every, self.goodput, self.lost)):
            grid.addWidget(b, 0, i)
        self._last: PlanResult | None = None

    def set_price(self, usd: float) -> None:
        self.price.blockSignals(True)
        self.price.setValue(usd)
        self.price.blockSignals(False)

    def _price_changed(self, usd: float) -> None:
        if self._last is not None:
            self._show_cost(self._last)
        self.priceChanged.emit(usd)

    def show_result(self, res: PlanResult) -> None:
        self._last = res
        m = res.main
        sc = m.scenario
        it = summarize(m.trials.unplanned)
        self.interruptions.value.setText(fmt.count(it.mean))
        self.interruptions.detail.setText(
            f"p05-p95 {fmt.count(it.p05)}-{fmt.count(it.p95)}; planned {m.trials.planned.mean():,.1f}"
        )
        self.every.value.setText(fmt.every(sc.cluster_mtbf_hours))
        self.every.detail.setText(f"one GPU: {fmt.every(sc.gpu_mtbf_hours)}")
        g = summarize(m.goodput)
        self.goodput.value.setText(fmt.percent(g.mean))
        self.goodput.detail.setText(
            f"p05-p95 {fmt.percent(g.p05)}-{fmt.percent(g.p95)}; exact {fmt.percent(m.expected.goodput, 2)}"
        )
        self._show_cost(res)

    def _show_cost(self, res: PlanResult) -> None:
        lost = float(res.main.lost_gpu_hours().mean())
        self.lost.value.setText(f"{fmt.compact(lost)} GPU-h")
        self.lost.detail.setText(f"costs {fmt.money(lost * self.price.value())}")
