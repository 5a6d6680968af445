"""Freed big blocks leave the process, however big the blocks freed before them."""

from __future__ import annotations

import platform
import subprocess
import sys

from tests.conftest import needs

# A 16 MB message's copy freed, then an 8 MB one made, touched and freed: where
# does the process's resident memory end up, against before the 8 MB one?
SCRIPT = """
import sys
from mcpeek.inspector.memtune import return_big_blocks
def rss():
    with open("/proc/self/status") as f:
        return next(int(l.split()[1]) for l in f if l.startswith("VmRSS:"))
if sys.argv[1] == "tuned":
    assert return_big_blocks()
first = bytearray(16 << 20)
del first
before = rss()
second = bytearray(b"x" * (8 << 20))
del second
print(rss() - before)
"""


def grown_kb(mode: str) -> int:
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT, mode], capture_output=True, text=True, check=True
    )
    return int(out.stdout)


def test_a_big_block_freed_after_a_bigger_one_is_given_back() -> None:
    needs(sys.platform.startswith("linux") and platform.libc_ver()[0] == "glibc", "glibc")
    assert grown_kb("untuned") > 4096  # what the tuning is for: glibc kept it
    assert grown_kb("tuned") < 1024


def test_the_proxies_and_the_live_worker_tune_their_malloc() -> None:
    for name in ("mcpeek.inspector.cli.main", "mcpeek.inspector.cli.live_worker"):
        module = __import__(name, fromlist=["main"])
        # main itself, or the function of its module it hands the work to
        called = [module.main] + [
            getattr(module, n) for n in module.main.__code__.co_names if hasattr(module, n)
        ]
        names = {n for f in called if hasattr(f, "__code__") for n in f.__code__.co_names}
        assert "memtune" in names, name
