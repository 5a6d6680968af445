"""Capture files: the append-only JSON Lines record of one proxied conversation.

:class:`CaptureWriter` appends records (each batch written to the file at
once; the file private, locked to one writer: :mod:`.files`);
:class:`CaptureReader` streams them back, from a finished file or following
one that another process is still writing.
"""

from mcpeek.inspector.capture.reader import CaptureError, CaptureReader, read_records
from mcpeek.inspector.capture.writer import CaptureWriter, redact_headers

__all__ = ["CaptureError", "CaptureReader", "CaptureWriter", "read_records", "redact_headers"]
