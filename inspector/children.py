"""How mcpeek starts a Python process of its own: one way, isolated.

``python -m pkg`` puts the working directory first on the import path, and
honours ``PYTHONPATH`` and the user's site directory. mcpeek runs where its
client runs, which is often an untrusted checkout: a folder holding
``inspector/__init__.py`` (or ``msgspec.py``) would run its code in place of
mcpeek's own. Isolated mode (``-I``, which implies ``-E -s -P``) imports only
from the interpreter's own paths, where mcpeek is installed (an editable
install included: its ``.pth`` file lives in site-packages).
"""

from __future__ import annotations

import sys


def python_module_argv(module: str, *args: str, python: str | None = None) -> list[str]:
    """The command line that runs ``module`` as ``__main__`` in isolated mode, with
    this interpreter unless ``python`` names another."""
    return [python or sys.executable, "-I", "-m", module, *args]


def mcpeek_argv(*args: str, python: str | None = None) -> list[str]:
    """mcpeek's own command line (``mcpeek ARGS...``), run by this interpreter."""
    return python_module_argv("mcpeek", *args, python=python)
