"""Where captures live when the user does not say (``-w``).

The capture directory is a proxy's ``--home DIR`` for that run (an SDK's
stdio client starts the server with a filtered environment, so
``$MCPEEK_HOME`` may never reach it), else ``$MCPEEK_HOME`` when set, else the platform's user
state directory (``$XDG_STATE_HOME/mcpeek/captures``, ``~/.local/state/...`` on
Linux; ``~/Library/Application Support/mcpeek/captures`` on macOS;
``%LOCALAPPDATA%\\mcpeek\\captures`` on Windows). ``mcpeek view`` without files
opens every capture found there.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Mapping
from pathlib import Path


def capture_dir(environ: Mapping[str, str] | None = None) -> Path:
    env = os.environ if environ is None else environ
    if env.get("MCPEEK_HOME"):
        return Path(env["MCPEEK_HOME"]).expanduser()
    home = Path.home()
    if sys.platform == "darwin":
        base = home / "Library" / "Application Support"
    elif sys.platform == "win32":
        base = Path(env.get("LOCALAPPDATA") or home / "AppData" / "Local")
    else:
        base = Path(env.get("XDG_STATE_HOME") or home / ".local" / "state")
    return base / "mcpeek" / "captures"


def default_capture_path(
    environ: Mapping[str, str] | None = None, home: Path | None = None
) -> Path:
    """A fresh file name in the capture directory (``home`` when given: a proxy's
    ``--home``), ``YYYYmmdd-HHMMSS-<pid>.jsonl`` (UTC)."""
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
    directory = home.expanduser() if home is not None else capture_dir(environ)
    return directory / f"{stamp}-{os.getpid()}.jsonl"
