"""How to start the compute server (:mod:`.server`): importing only the standard library, so that the app starts
it first, before it imports anything heavy itself (the server then imports numpy and scipy on the other core while
the window is built)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

__all__ = ["SERVE_ARG", "server_command", "server_cwd", "server_env", "spawn"]

#: The command-line argument that turns ``planner-gui`` into the compute server.
SERVE_ARG = "_compute-server"


def server_command() -> list[str]:
    """How to start the compute server: this same program with a hidden argument."""
    if getattr(sys, "frozen", False):
        return [sys.executable, SERVE_ARG]
    return [sys.executable, "-m", "planner_gui", SERVE_ARG]


def server_env() -> dict[str, str]:
    """The server's environment: this one, with this very package first on the path."""
    env = dict(os.environ)
    root = server_cwd()
    env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


def server_cwd() -> str:
    """Where a process of this program is started: the folder that holds this very package. ``python -m``
    puts its working folder first on the path, so started elsewhere (in another clone of the repository, say)
    it could import another ``planner_gui`` than the window's and answer with other code."""
    return str(Path(__file__).resolve().parents[2])


def spawn(command: list[str] | None = None) -> subprocess.Popen[bytes]:
    """Start a compute server (``command``, by default :func:`server_command`) with unbuffered pipes to
    its input and output; OSError if it cannot be started."""
    return subprocess.Popen(
        command or server_command(),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        env=server_env(),
        cwd=server_cwd(),
        bufsize=0,
    )
