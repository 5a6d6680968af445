"""Big blocks go back to the system once freed (glibc's malloc).

glibc serves a block of 128 KiB or more with a mapping of its own and unmaps
it when it is freed, but after such a free it raises that threshold to the
freed block's size (up to 32 MiB): the next big message is then carved from
the heap, which is seldom trimmed, and a proxy that relayed a few 16 MB
messages kept their memory for good. Setting the threshold once turns that
adjustment off. Measured on the proxies with 16 MB messages: peak RSS of
``mcpeek http`` (16 MB each way) 110 -> 79-95 MB, of ``mcpeek stdio`` 106 -> 74 MB.

Setting it also turns off the matching adjustment of the trim threshold, which
then stays at 128 KiB: each 1 MiB slice that the redaction scan of a big message
makes (see :mod:`mcpeek.inspector.capture.redact_runs`) was carved from the top of
the heap and given back once freed, and the next one faulted its pages in again
(about 1.6 us a page on the VMs measured). The heap now keeps up to
:data:`BIG_BLOCK` free at its top: recording a 16 MB JSON message faulted 14k
pages, now 8k, and its CPU went 93 -> 73 ms; the memory kept is bounded by it.
"""

from __future__ import annotations

import ctypes
import sys

M_TRIM_THRESHOLD = -1  # mallopt's parameters, from glibc's malloc.h
M_MMAP_THRESHOLD = -3
# Blocks from 4 MiB up are mapped on their own: a big message's copies, not the
# relay's reads (up to 1 MiB from a pipe), which a mapping per read would cost
# a page fault per 4 KiB.
BIG_BLOCK = 4 << 20


def return_big_blocks() -> bool:
    """For mcpeek's own processes; whether the C library took the setting."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        mallopt = ctypes.CDLL(None).mallopt  # the C library this interpreter runs on
    except (OSError, AttributeError):
        return False
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    mallopt.restype = ctypes.c_int
    mapped = bool(mallopt(M_MMAP_THRESHOLD, BIG_BLOCK))
    return bool(mallopt(M_TRIM_THRESHOLD, BIG_BLOCK)) and mapped
