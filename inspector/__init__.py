"""mcpeek's headless core: records, JSON-RPC decoding, capture files, the proxies and the CLI.

Nothing in this package imports textual; the terminal UI lives in ``tui`` and is
imported lazily by the CLI, the composition root. ``inspector.load`` and
``inspector.Capture`` are imported on first use, so that ``mcpeek stdio`` starts
without loading the analyser it runs in a separate process.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

if TYPE_CHECKING:
    from mcpeek.inspector.loaded import Capture, load

__all__ = ["Capture", "__version__", "load"]


def __getattr__(name: str) -> Any:
    if name in ("Capture", "load"):
        from mcpeek.inspector import loaded

        return getattr(loaded, name)
    raise AttributeError(f"module 'inspector' has no attribute {name!r}")
