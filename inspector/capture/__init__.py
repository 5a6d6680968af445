"""Capture files: the append-only JSON Lines record of one proxied conversation.

:class:`CaptureWriter` appends records (flushed at least every 50 ms by its
owner's clock, and at close); :class:`CaptureReader` streams them back, from a
finished file or following one that another process is still writing.
"""

from mcpeek.inspector.capture.reader import CaptureError, CaptureReader, read_records
from mcpeek.inspector.capture.writer import CaptureWriter, redact_headers

__all__ = ["CaptureError", "CaptureReader", "CaptureWriter", "read_records", "redact_headers"]
