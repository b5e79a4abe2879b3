"""``python -m planner_gui``: the same program as the ``planner-gui`` command."""

import sys

from planner_gui.cli import main

if __name__ == "__main__":
    sys.exit(main())
