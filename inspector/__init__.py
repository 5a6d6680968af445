"""mcpeek's headless core: records, JSON-RPC decoding, capture files, the proxies and the CLI.

Nothing in this package imports textual; the terminal UI lives in ``tui`` and is
imported lazily by the CLI, the composition root.
"""

__version__ = "0.1.0"

from inspector.loaded import Capture, load

__all__ = ["Capture", "__version__", "load"]
