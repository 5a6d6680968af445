"""``--otlp URL`` on ``mcpeek stdio`` and ``mcpeek http``: spans sent while the traffic flows.

The export runs in a process of its own (:mod:`mcpeek.inspector.export.follow`)
that follows the capture the proxy writes, so the relay never waits on it: the
SDK batches and sends from that process. When the traffic is over and the
capture closed, it gets FINISH_GRACE seconds to send what is left; then it is
stopped (``mcpeek export FILE --format otlp`` sends a whole capture).
"""

from __future__ import annotations

import argparse
import contextlib
import subprocess
import sys
from pathlib import Path

from mcpeek.inspector.children import python_module_argv
from mcpeek.inspector.cli.base import UsageError
from mcpeek.inspector.export.endpoint import BadEndpoint, MissingOtel, parse_endpoint, require_otel

# Seconds the follower gets to send the last spans and histograms: a receiver that
# is down costs one SEND_TIMEOUT (the histograms are not tried after failed spans).
FINISH_GRACE = 3.0
SEND_TIMEOUT = 1.5  # seconds one send may take: a dead receiver must not hold the exit


def add_otlp_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--otlp",
        metavar="URL",
        help="also send each flow as an OpenTelemetry span, live, to this OTLP receiver: "
        "http://HOST:4318 (OTLP/HTTP) or grpc://HOST:4317 (OTLP/gRPC); needs the otel "
        "extra (in mcpeek's clone: pip install '.[otel]')",
    )


class OtlpFollower:
    """The ``--otlp`` export of one proxy run (nothing when ``url`` is ``None``)."""

    def __init__(self, url: str | None) -> None:
        """Checks ``url`` and the otel extra at once: a UsageError before anything starts."""
        self.url = url
        self._process: subprocess.Popen[bytes] | None = None
        if url is None:
            return
        try:
            parse_endpoint(url)
            require_otel()
        except (BadEndpoint, MissingOtel) as exc:
            raise UsageError(f"--otlp: {exc}") from None

    def start(self, capture: Path, *, quiet: bool = False) -> None:
        """Follow ``capture``, once the run has started: by then it is the new
        capture under that name, not one that ``--force`` replaces (or keeps, when
        the server never starts). ``quiet`` (a viewer owns the terminal) keeps its
        one line about a failing receiver off stderr."""
        if self.url is None:
            return
        argv = python_module_argv(
            "mcpeek.inspector.export.follow", str(capture), self.url, str(SEND_TIMEOUT)
        )
        # Its stdout is not the protocol pipe (stdio mode): only stderr is shared.
        try:
            self._process = subprocess.Popen(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL if quiet else None,
                close_fds=True,
            )
        except OSError as exc:  # the traffic matters more than its export
            if not quiet:
                print(
                    f"mcpeek: OTLP export unavailable ({exc.strerror or exc}); traffic is "
                    f"relayed and recorded: mcpeek export {capture} --format otlp sends it later",
                    file=sys.stderr,
                    flush=True,
                )

    def finish(self) -> None:
        """The capture is closed: the follower sends the rest and ends, or is stopped."""
        process = self._process
        if process is None:
            return
        try:
            process.wait(timeout=FINISH_GRACE)
        except subprocess.TimeoutExpired:
            process.terminate()
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(timeout=1.0)
            if process.poll() is None:
                process.kill()
                process.wait()
