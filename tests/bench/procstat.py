"""What /proc says of a benchmarked process: its memory (VmRSS/VmHWM) and its CPU time.

Shared by the relay benchmarks (run as scripts: this folder is on ``sys.path``).
"""

from __future__ import annotations

import os

CLK_TCK = os.sysconf("SC_CLK_TCK")


def proc_status(pid: int) -> dict[str, int]:
    """VmRSS/VmHWM (kB) of a live process; {} once it is gone or a zombie."""
    out: dict[str, int] = {}
    try:
        with open(f"/proc/{pid}/status", "rb") as f:
            for line in f:
                if line.startswith((b"VmHWM:", b"VmRSS:")):
                    key, value = line.split(b":", 1)
                    out[key.decode()] = int(value.split()[0])
    except (FileNotFoundError, ProcessLookupError):
        pass
    return out


def proc_cpu(pid: int | None) -> float | None:
    """utime+stime in seconds, from /proc/<pid>/stat."""
    if pid is None:
        return None
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
    except (FileNotFoundError, ProcessLookupError):
        return None
    fields = stat[stat.rindex(b")") + 2 :].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK
