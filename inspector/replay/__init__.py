"""Replay: mock servers from captures (``mcpeek serve``) and client replay (``mcpeek replay``).

The mock server's Python API is importable from here (lazily, so that
``inspector.replay.canonical`` stays light): :class:`MockServer`,
:func:`start_http`, :func:`serve_stdio`, :func:`stdio_command`; see
:mod:`inspector.replay.serving`.
"""

from __future__ import annotations

from typing import Any

_LAZY = {
    "MockServer": "inspector.replay.mock",
    "ServeError": "inspector.replay.mock",
    "start_http": "inspector.replay.serving",
    "serve_stdio": "inspector.replay.serving",
    "stdio_command": "inspector.replay.serving",
    "RunningHttp": "inspector.replay.serving",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'inspector.replay' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)
