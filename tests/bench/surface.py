#!/usr/bin/env python3
"""What the surface model (``inspector/surface``) costs the viewer's indexing.

    python tests/bench/surface.py [--messages N] [--rounds R]

A plain script, not a test: it prints figures and asserts nothing about
timing. It writes a realistic modern capture (the generator of
``analyze.py``: tool calls, a ``tools/list`` every few calls, MRTR chains,
list_changed notifications), then indexes it with the viewer's
:class:`SessionModel` (reading, correlation, rows) with and without the
surface listener, in CPU time, ``R`` rounds each (the best of each is kept:
a shared machine only ever adds time), with the garbage collector tuned as
mcpeek's CLI tunes it. Then the ratio, and the cost of one snapshot (what
opening the handshake view takes).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
sys.path.insert(0, str(ROOT))

from mcpeek.inspector import gctune  # noqa: E402
from mcpeek.inspector.capture.reader import CaptureReader  # noqa: E402
from mcpeek.inspector.surface import SurfaceListener  # noqa: E402
from mcpeek.inspector.views import session  # noqa: E402
from tests.bench.analyze import write_capture  # noqa: E402


class Silent(SurfaceListener):
    """The listener left out (the call itself stays, as any listener's would)."""

    def on_message(self, entry, flow, conversation):  # type: ignore[no-untyped-def]
        pass


def index(path: Path, listener: type[SurfaceListener]) -> tuple[float, session.SessionModel]:
    kept = session.SurfaceListener
    session.SurfaceListener = listener  # type: ignore[misc]
    try:
        started = time.process_time()
        model = session.SessionModel(path)
        model.feed(CaptureReader(path).stream())
        model.finish()
        return time.process_time() - started, model
    finally:
        session.SurfaceListener = kept  # type: ignore[misc]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=200_000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    gctune.for_this_process()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "bench.jsonl"
        write_capture(path, args.messages)
        without, with_surface = [], []
        for _ in range(args.rounds):
            without.append(index(path, Silent)[0])
            seconds, model = index(path, SurfaceListener)
            with_surface.append(seconds)
        started = time.process_time()
        (surface,) = model.surface.surfaces()
        snapshot = time.process_time() - started
    base, cost = min(without), min(with_surface)
    print(f"{args.messages} messages, {surface.listed.get('tools', 0)} tools/list answers")
    print(f"index without the surface model: {base:.2f} s CPU")
    print(f"index with the surface model:    {cost:.2f} s CPU  (ratio {cost / base:.2f})")
    print(f"one snapshot (opening the handshake view): {snapshot * 1000:.1f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
