"""The demo's scripted MCP client: one paced 2026-07-28 conversation, through mcpeek.

It starts the real stdio proxy as a subprocess, with the demo server behind it::

    python -m mcpeek stdio -q -w CAPTURE -- python -m mcpeek.inspector.demo.server

and plays, one step at a time with a short pause between steps (so that a live
view shows the conversation arriving):

 1. ``server/discover``
 2. ``tools/list``
 3. ``resources/list``
 4. ``subscriptions/listen`` for ``demo://notes/todo.md`` (acknowledged; stays open)
 5. ``tools/call build`` with a ``progressToken``: three progress notifications
 6. ``tools/call deploy``: ``input_required`` with an ``elicitation/create``
    input request; the client "asks the user", then retries (a new id) with
    ``inputResponses`` and the server's ``requestState``: complete
 7. ``tools/call status``: the server's structuredContent breaks its outputSchema
 8. ``tools/call add_note``: a ``notifications/resources/updated`` on the subscription
 9. ``resources/read`` of the note: the server's result lacks ``resultType``
10. ``tools/call search``: slow; after its first progress notification the client
    sends ``notifications/cancelled``, and the server stops without answering
11. ``notifications/cancelled`` for the subscription, then end of stdin

Every request carries the modern ``_meta`` (protocol version, client info,
client capabilities with form elicitation); ids are 1, 2, 3… The client side
is conformant: whatever a linter finds, the server did (on purpose). The
process and message plumbing is :mod:`mcpeek.inspector.demo.connection`'s.

Run on its own:  python -m mcpeek.inspector.demo.client [-w CAPTURE] [--delay SECONDS]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

from mcpeek.inspector.demo.catalog import MCP, NOTE_URI
from mcpeek.inspector.demo.connection import (
    DEFAULT_DELAY,
    DemoClient,
    DemoError,
    Message,
    proxy_command,
)

# The CLI and the tests import all of these from here, connection's plumbing included.
__all__ = [
    "DEFAULT_DELAY",
    "DemoClient",
    "DemoError",
    "answer_input_requests",
    "converse",
    "main",
    "play",
    "proxy_command",
    "run_demo",
]


def answer_input_requests(requests: dict[str, Any]) -> dict[str, Any]:
    """What the scripted "user" answers: yes to every confirmation form."""
    answers: dict[str, Any] = {}
    for key, request in requests.items():
        if not isinstance(request, dict) or request.get("method") != "elicitation/create":
            raise DemoError(f"unexpected input request {key!r}: {json.dumps(request)}")
        schema = (request.get("params") or {}).get("requestedSchema") or {}
        properties = schema.get("properties") or {}
        content = {name: True for name, spec in properties.items() if spec.get("type") == "boolean"}
        answers[key] = {"action": "accept", "content": content}
    return answers


def converse(client: DemoClient) -> None:
    """The scripted conversation (see the module's docstring)."""
    client.call("server/discover", {})
    client.pause()
    client.call("tools/list", {})
    client.pause()
    client.call("resources/list", {})
    client.pause()

    listen = client.send_request(
        "subscriptions/listen", {"notifications": {"resourceSubscriptions": [NOTE_URI]}}
    )
    client.wait_notification(
        lambda m: (
            m.get("method") == "notifications/subscriptions/acknowledged"
            and _subscription(m) == listen
        ),
        "the subscription's acknowledgment",
    )
    client.pause()

    client.call("tools/call", {"name": "build", "arguments": {"target": "app"}}, progress=True)
    client.pause()

    deploy = {"name": "deploy", "arguments": {"env": "staging"}}
    first = client.call("tools/call", deploy)
    if first.get("resultType") != "input_required":
        raise DemoError(f"deploy did not ask for input: {json.dumps(first)}")
    client.pause(2)  # the user reads the question and clicks "Deploy now"
    retry = {
        **deploy,
        "inputResponses": answer_input_requests(first.get("inputRequests") or {}),
        "requestState": first["requestState"],
    }
    client.call("tools/call", retry)
    client.pause()

    client.call("tools/call", {"name": "status", "arguments": {"env": "staging"}})
    client.pause()

    client.call("tools/call", {"name": "add_note", "arguments": {"text": "announce the release"}})
    client.pause()
    client.call("resources/read", {"uri": NOTE_URI})
    client.pause()

    search = client.send_request(
        "tools/call", {"name": "search", "arguments": {"query": "rollback plan"}}, progress=True
    )
    token = f"progress-{search}"
    client.wait_notification(
        lambda m: (
            m.get("method") == "notifications/progress"
            and (m.get("params") or {}).get("progressToken") == token
        ),
        "the search's first progress",
    )
    client.pause(2)  # the user gives up waiting
    client.notify(
        "notifications/cancelled", {"requestId": search, "reason": "the user stopped the search"}
    )
    client.pause()
    client.notify("notifications/cancelled", {"requestId": listen, "reason": "the demo is over"})
    client.pause(0.5)


def _subscription(message: Message) -> Any:
    meta = (message.get("params") or {}).get("_meta") or {}
    return meta.get(MCP + "subscriptionId")


def run_demo(
    capture: Path, *, delay: float = DEFAULT_DELAY, python: str = sys.executable
) -> DemoClient:
    """Play the whole conversation through ``mcpeek stdio`` into ``capture``.

    Returns the finished client; raises :class:`DemoError` when the conversation
    could not be played or mcpeek did not exit 0.
    """
    client = DemoClient(proxy_command(capture, python=python, delay=delay * 0.75), delay=delay)
    play(client)
    return client


def play(client: DemoClient) -> None:
    """Start ``client``, converse, close; a DemoError says what went wrong."""
    client.start()
    try:
        converse(client)
    except DemoError:
        client.close(timeout=5.0)
        raise
    code = client.close()
    if code != 0 and not client.aborted:
        raise DemoError(f"mcpeek exited with code {code}: {client.last_words()}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m mcpeek.inspector.demo.client",
        description="Play mcpeek's demo conversation through mcpeek stdio.",
    )
    parser.add_argument("-w", "--write", type=Path, metavar="FILE", help="capture file")
    parser.add_argument("--delay", type=float, default=DEFAULT_DELAY, metavar="SECONDS")
    args = parser.parse_args(argv)
    capture = args.write
    if capture is None:
        fd, name = tempfile.mkstemp(prefix="mcpeek-demo-", suffix=".jsonl")
        os.close(fd)
        capture = Path(name)
    try:
        run_demo(capture, delay=max(0.0, args.delay))
    except DemoError as exc:
        print(f"demo client: {exc}", file=sys.stderr)
        return 1
    print(capture)
    return 0


if __name__ == "__main__":
    sys.exit(main())
