"""Replay: mock servers from captures (``mcpeek serve``) and client replay (``mcpeek replay``).

The mock server's Python API is importable from here (lazily, so that
``mcpeek.inspector.replay.canonical`` stays light): :class:`MockServer`,
:func:`start_http`, :func:`serve_stdio`, :func:`stdio_command`; see
:mod:`mcpeek.inspector.replay.serving`.
"""

from __future__ import annotations

from typing import Any

_LAZY = {
    "MockServer": "mcpeek.inspector.replay.mock",
    "ServeError": "mcpeek.inspector.replay.mock",
    "start_http": "mcpeek.inspector.replay.serving",
    "serve_stdio": "mcpeek.inspector.replay.serving",
    "stdio_command": "mcpeek.inspector.replay.serving",
    "RunningHttp": "mcpeek.inspector.replay.serving",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'mcpeek.inspector.replay' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)
