"""Real-SDK Streamable HTTP MCP client used as the downstream peer in mcpeek's end-to-end tests.

Usage::

    python tests/peers/sdk_http_client.py --era modern|legacy|auto --url URL
        [--no-discover] [--skip-confirm] [--answer yes|no|decline|cancel] [--elicitations N]

The HTTP counterpart of ``sdk_client.py``: ``mcp.Client(URL)`` (the SDK's
``streamable_http_client`` transport; no hand-written JSON-RPC, no hand-made HTTP)
runs one conversation against ``URL``:

* ``--era modern``: protocol 2026-07-28 via ``Client(mode="2026-07-28")``, then one
  explicit ``server/discover`` (public ``ClientSession.send_discover`` + ``adopt``),
  exactly like ``sdk_client.py``; ``--no-discover`` skips it.  Every request is a
  self-contained POST (no session).
* ``--era legacy``: protocol 2025-11-25 via ``Client(mode="legacy")``:
  ``initialize`` + ``notifications/initialized`` (the SDK then opens the GET
  stream); on exit the SDK sends ``DELETE`` for the ``Mcp-Session-Id``.
* ``--era auto``: the SDK default (discover probe, fall back to initialize).

Then: tools/list, tools/call add(2,3), tools/call count(3) with a progress
callback, tools/call get_weather("Paris"), and (unless ``--skip-confirm``)
tools/call confirm("Proceed?") whose elicitation is answered by this client's
elicitation callback (``--answer``, default ``yes`` = accept ``{"confirm": true}``).
At 2026-07-28 that is the multi round-trip flow (``InputRequiredResult`` ->
retried ``tools/call`` with ``inputResponses``/``requestState``, driven by
``Client.call_tool``); at 2025-11-25 it is a server-to-client
``elicitation/create`` request answered with a POSTed JSON-RPC response.

Prints ONE JSON object to stdout and exits 0::

    {"era", "protocol_version", "tools", "add", "progress", "weather",
     "confirm", "elicitations": [{"key", "message"}]}

(``confirm`` and ``elicitations`` are null/[] with ``--skip-confirm``.)  ``key`` is
the id the SDK gave the callback: the ``inputRequests`` key (a string) for MRTR,
the JSON-RPC request id (an int) for a legacy ``elicitation/create``.

On any failure (negotiated version not the requested era's, an isError tool
result or JSON-RPC error, an unexpected ``confirm`` answer, the conversation
deadline of 22 s after start-up, ...) it prints the error and a traceback to
stderr and exits 1 (usage errors: exit 2).  A watchdog thread ends the process
(exit 1) 27 s after start-up whatever happens, so it never outlives 30 s, even
against a mute server, a black hole, or a proxy that eats a reply.
The client response cache is off, so every call hits the wire.
"""

from __future__ import annotations

import time

T_START = time.monotonic()  # before the heavy imports, which take 1.5-5 s on a busy machine

import argparse  # noqa: E402
import os  # noqa: E402
import sys  # noqa: E402
import threading  # noqa: E402
from typing import Any  # noqa: E402

import mcp_types as types  # noqa: E402
from conversation import MODES, checked, common_calls, hold, text  # noqa: E402
from mcp import Client  # noqa: E402
from mcp.client.session import ClientRequestContext  # noqa: E402

DEADLINE_S = 22.0
"""Conversation deadline, counted from the start of this module (imports included)."""
WATCHDOG_S = 27.0
"""Hard stop, also from module start: if the orderly failure path itself stalls (a
transport teardown that does not return), exit 1 anyway.  Together with the
interpreter's own start-up (~1 s) the process never outlives 30 s."""
QUESTION = "Proceed?"
ANSWERS: dict[str, tuple[types.ElicitResult, str]] = {
    # --answer -> (what the elicitation callback returns, what confirm() must then say)
    "yes": (
        types.ElicitResult(action="accept", content={"confirm": True}),
        f"confirmed: {QUESTION}",
    ),
    "no": (types.ElicitResult(action="accept", content={"confirm": False}), f"refused: {QUESTION}"),
    "decline": (types.ElicitResult(action="decline"), f"decline: {QUESTION}"),
    "cancel": (types.ElicitResult(action="cancel"), f"cancel: {QUESTION}"),
}


async def converse(
    era: str, url: str, discover: bool, confirm: bool, answer: str, asked: int = 1
) -> dict[str, Any]:
    mode = MODES[era]
    updates: list[tuple[float, float | None, str | None]] = []
    elicitations: list[dict[str, Any]] = []
    reply, expected_confirm = ANSWERS[answer]

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        updates.append((progress, total, message))

    async def on_elicit(
        context: ClientRequestContext, params: types.ElicitRequestParams
    ) -> types.ElicitResult | types.ErrorData:
        elicitations.append(
            {"key": context.request_id, "message": getattr(params, "message", None)}
        )
        return reply

    client_info = types.Implementation(name="mcpeek-sdk-http-client", version="0.1.0")
    # cache=None: every list/call must reach the wire (the proxy under test must see it).
    async with Client(
        url,
        mode=mode,
        client_info=client_info,
        cache=None,
        read_timeout_seconds=DEADLINE_S,
        elicitation_callback=on_elicit,
    ) as client:
        outcome = await common_calls(client, era, discover, on_progress)
        confirmed: str | None = None
        if confirm:
            confirmed = text(
                checked("confirm", await client.call_tool("confirm", {"question": QUESTION}))
            )
            if confirmed != expected_confirm or len(elicitations) != asked:
                raise RuntimeError(
                    f"confirm: got {confirmed!r} after {len(elicitations)} elicitation(s), "
                    f"expected {expected_confirm!r} after {asked}"
                )
        # Leaving the block closes the transport; at 2025-11-25 the SDK sends DELETE first.

    return {**outcome, "progress": len(updates), "confirm": confirmed, "elicitations": elicitations}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="Run one MCP conversation over Streamable HTTP with the official SDK client."
    )
    parser.add_argument("--era", choices=["modern", "legacy", "auto"], required=True)
    parser.add_argument("--url", required=True, help="MCP endpoint, e.g. http://127.0.0.1:8765/mcp")
    parser.add_argument(
        "--no-discover", action="store_true", help="modern: skip the server/discover probe"
    )
    parser.add_argument(
        "--skip-confirm", action="store_true", help="do not call the elicitation tool confirm()"
    )
    parser.add_argument(
        "--answer",
        choices=sorted(ANSWERS),
        default="yes",
        help="how to answer confirm()'s question",
    )
    parser.add_argument(
        "--elicitations",
        type=int,
        default=1,
        metavar="N",
        help="how many questions confirm() brings to this client (0: a proxy answers them)",
    )
    args = parser.parse_args(argv)

    def watchdog() -> None:
        print(
            f"sdk_http_client: still running {WATCHDOG_S:g} s after start-up, giving up",
            file=sys.stderr,
            flush=True,
        )
        os._exit(1)

    timer = threading.Timer(max(0.0, WATCHDOG_S - (time.monotonic() - T_START)), watchdog)
    timer.daemon = True
    timer.start()

    try:
        return hold(
            "sdk_http_client",
            args.era,
            lambda: converse(
                args.era,
                args.url,
                not args.no_discover,
                not args.skip_confirm,
                args.answer,
                args.elicitations,
            ),
            max(0.5, DEADLINE_S - (time.monotonic() - T_START)),
            f"no complete conversation {DEADLINE_S:g} s after start-up",
        )
    finally:
        timer.cancel()


if __name__ == "__main__":
    sys.exit(main())
