"""``python -m planner_gui.core.incidents``: print the shipped sample log (to regenerate it)."""

import sys

from .synthetic import sample_log_text

sys.stdout.write(sample_log_text())
