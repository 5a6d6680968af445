"""The demo's MCP server: 2026-07-28, raw JSON-RPC over stdio, no SDK.

A small "release desk" server, written by hand so that every byte it sends is
chosen (and so that the demo needs nothing beyond mcpeek's own dependencies):

=============================  ================================================
``server/discover``            the modern handshake: version, capabilities
``tools/list``                 ``build``, ``deploy``, ``status``, ``add_note``,
                               ``search``
``tools/call build``           ``notifications/progress`` 1/3, 2/3, 3/3, then
                               the result (paced, ``--delay``)
``tools/call deploy``          multi round-trip: an ``input_required`` result
                               asking for an ``elicitation/create``
                               confirmation, with a signed ``requestState``;
                               the retry with ``inputResponses`` completes
``tools/call add_note``        appends to ``demo://notes/todo.md`` and sends
                               ``notifications/resources/updated`` to every
                               ``subscriptions/listen`` that asked for it
``tools/call search``          slow: one progress notification, then it waits
                               (up to 20 s) for a ``notifications/cancelled``,
                               and stops without answering
``resources/list`` / ``read``  the to-do note
``subscriptions/listen``       acknowledged at once; stays open until the
                               client cancels it
=============================  ================================================

It logs to stderr (``demo-server: …``), the 2026-07-28 way: protocol logging
(``notifications/message``) is deprecated in this version.

**Two deliberate spec violations**, so that the demo has something to flag.
Everything else is meant to be conformant (``mcpeek lint`` of a demo capture
reports exactly these two):

* ``tools/call status``: ``structuredContent.healthy`` is the string
  ``"yes"`` although the tool's ``outputSchema`` says boolean
  (rule ``tools.output-schema``);
* ``resources/read``: the result has no ``resultType``
  (rule ``result.result-type-missing``).

Requests without the required ``_meta`` get -32602, an unsupported protocol
version -32022, unknown methods -32601. The server exits at the end of stdin.

Run:  python -m mcpeek.inspector.demo.server [--delay SECONDS]
"""

from __future__ import annotations

import argparse
import json
import sys

from mcpeek.inspector.demo.catalog import MCP, NOTE_URI, SERVER_INFO, TOOLS, VERSION, Message
from mcpeek.inspector.demo.dispatch import DemoServer, log_to_stderr
from mcpeek.inspector.demo.tools import confirm_request

# Re-exported: importing these from here predates the split into catalog, tools and dispatch.
__all__ = [
    "MCP",
    "NOTE_URI",
    "SERVER_INFO",
    "TOOLS",
    "VERSION",
    "DemoServer",
    "confirm_request",
    "main",
]


def _stdout_send(message: Message) -> None:
    sys.stdout.write(json.dumps(message, separators=(",", ":")) + "\n")
    sys.stdout.flush()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m mcpeek.inspector.demo.server",
        description="mcpeek's demo MCP server (2026-07-28, stdio).",
    )
    parser.add_argument(
        "--delay",
        type=float,
        default=0.3,
        metavar="SECONDS",
        help="pause between a tool's steps (default: 0.3)",
    )
    args = parser.parse_args(argv)
    server = DemoServer(_stdout_send, delay=max(0.0, args.delay))
    log_to_stderr("ready")
    try:
        for line in sys.stdin:
            if not line.strip():
                continue
            try:
                message = json.loads(line)
            except ValueError:
                log_to_stderr("ignored a line that is not JSON")
                continue
            server.handle(message)
    except KeyboardInterrupt:
        pass
    finally:
        server.close()
    log_to_stderr("bye")
    return 0


if __name__ == "__main__":
    sys.exit(main())
