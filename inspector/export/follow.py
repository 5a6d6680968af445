"""The background process behind ``mcpeek stdio|http --otlp URL``.

    python -I -m mcpeek.inspector.export.follow CAPTURE URL [SEND_TIMEOUT]

It follows the capture the proxy writes (the capture file is the bus, as for
the live checks), runs the rules on it, turns each flow into a span (with
its violation events) as it ends, and hands the spans to the SDK's batch
processor, which sends them from its own thread. The process runs niced:
under load, the relay gets the CPU first. The relay never
waits on any of it. When sending fails, it says so once on stderr and
goes on following (the proxy relays and records regardless; ``mcpeek export
FILE --format otlp`` can send the capture later). It stops when the proxy
lets go of the capture, after sending what is left.
"""

from __future__ import annotations

import contextlib
import os
import sys
from pathlib import Path

from mcpeek.inspector.capture.files import WriterGone
from mcpeek.inspector.capture.reader import CaptureError, CaptureReader
from mcpeek.inspector.capture.run import run_capture
from mcpeek.inspector.export.collect import Traced
from mcpeek.inspector.export.endpoint import BadEndpoint, parse_endpoint
from mcpeek.inspector.records import AnyRecord

#: How often the SDK's batch processor sends while traffic flows (ms).
SEND_DELAY_MS = 1000
#: Niceness added to this process: under load, the relay comes first.
NICENESS = 10


class FailingOnce:
    """Says the first failure to send, and nothing of the next ones."""

    def __init__(self, url: str, capture: Path) -> None:
        self._url = url
        self._capture = capture
        self.told = False

    def __call__(self, reason: str) -> None:
        if self.told:
            return
        self.told = True
        print(
            f"mcpeek: OTLP export to {self._url} is failing ({reason}); traffic is still "
            f"relayed and recorded: mcpeek export {self._capture} --format otlp "
            "--endpoint URL sends it later",
            file=sys.stderr,
            flush=True,
        )


def follow(capture: Path, url: str, send_timeout: float) -> int:
    from mcpeek.inspector.export.otlp import Sender

    endpoint = parse_endpoint(url)
    failing = FailingOnce(url, capture)
    with contextlib.suppress(OSError):  # (a system without nice: the same, unniced)
        os.nice(NICENESS)
    sender = Sender(endpoint, send_timeout, failing, send_delay_ms=SEND_DELAY_MS)
    # The rules run here too, beside the proxy's live checks: the violation records
    # those add come late, or not at all from a worker stopped while behind, and a
    # span must carry its violations when it goes. It costs CPU in a niced process.
    traced = Traced()
    released = WriterGone(capture)

    def hand_over(_record: AnyRecord | None = None) -> None:
        spans = traced.builder.drain()
        if spans:
            sender.emit(spans)

    def done() -> bool:
        hand_over()  # while the capture is quiet, the last flows go out too
        return released()

    try:
        run_capture(CaptureReader(capture), traced.analyzer, follow=True, stop=done, each=hand_over)
        hand_over()
    except CaptureError as exc:
        if not capture.exists():  # the proxy discarded it (its server never started)
            return 0
        print(f"mcpeek: OTLP export stopped: {exc}", file=sys.stderr, flush=True)
        return 2
    except KeyboardInterrupt:  # the proxy's Ctrl-C reaches its whole process group
        hand_over()
    finally:
        sender.close()
    return 0


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) not in (2, 3):
        print("usage: python -m mcpeek.inspector.export.follow CAPTURE URL [SEND_TIMEOUT]")
        return 2
    try:
        timeout = float(args[2]) if len(args) == 3 else 10.0
        return follow(Path(args[0]), args[1], timeout)
    except (BadEndpoint, ValueError) as exc:
        print(f"mcpeek: OTLP export: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
