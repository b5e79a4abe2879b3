"""Entry point of the frozen application (PyInstaller runs this file)."""

import multiprocessing
import sys

from planner_gui.cli import main

if __name__ == "__main__":
    multiprocessing.freeze_support()
    sys.exit(main())
