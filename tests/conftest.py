"""Shared test setup: Qt runs offscreen; no test may leave a thread or timer running."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
