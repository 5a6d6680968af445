"""The server surface: what each conversation declared and offered, and how it changed.

- :mod:`.model`: the data (:class:`ConversationSurface`, :class:`Drift`, ...);
- :mod:`.listen`: :class:`SurfaceListener` (an analysis listener) and
  :func:`read_surfaces` (a capture file through ``run_capture``);
- :mod:`.tracker`: one conversation's listings, page by page, and their history;
- :mod:`.usage`: used without being declared, declared and never used.

``mcpeek diff`` compares two captures' surfaces and traffic (:mod:`.compare`,
:mod:`.traffic`, :mod:`.report`).
"""

from mcpeek.inspector.surface.listen import CaptureSurface, SurfaceListener, read_surfaces
from mcpeek.inspector.surface.model import (
    KINDS,
    ConversationSurface,
    Drift,
    Usage,
    Version,
)

__all__ = [
    "KINDS",
    "CaptureSurface",
    "ConversationSurface",
    "Drift",
    "SurfaceListener",
    "Usage",
    "Version",
    "read_surfaces",
]
