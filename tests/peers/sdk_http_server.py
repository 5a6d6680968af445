"""Real-SDK Streamable HTTP MCP server used as the upstream peer in mcpeek's end-to-end tests.

The HTTP counterpart of ``sdk_server.py``, built only with the official ``mcp``
SDK's public API: ``MCPServer.streamable_http_app()`` (a Starlette app around the
SDK's ``StreamableHTTPSessionManager``) served by uvicorn.  That one endpoint
serves BOTH protocol eras, routed by the SDK on the ``MCP-Protocol-Version``
request header:

* header naming a modern revision (2026-07-28): a self-contained POST per request
  (no ``initialize``, no ``Mcp-Session-Id``, GET/DELETE answer 405);
* header absent or a handshake-era version (2025-11-25 ...): the legacy
  stateful transport (``initialize`` -> ``Mcp-Session-Id``, GET stream, DELETE).

Offered (same as ``sdk_server.py`` plus one multi-round-trip tool):

* tool ``add(a: int, b: int) -> int``  (structured output ``{"result": a+b}``)
* tool ``count(n: int) -> str``         (reports progress n times, returns "counted n")
* tool ``get_weather(city: str) -> str`` ("Sunny in <city>"); with
  ``--hold-weather FILE`` it answers only once FILE exists (a hung call on cue)
* tool ``confirm(question: str) -> str`` asks the client a yes/no question through
  the SDK's resolver API (``Resolve`` + ``Elicit``).  At 2026-07-28 that is a
  multi round-trip (MRTR): the first ``tools/call`` returns an
  ``InputRequiredResult`` carrying an ``elicitation/create`` input request and a
  sealed ``requestState``; the client retries the call with ``inputResponses``.
  At 2025-11-25 the SDK instead sends an ``elicitation/create`` request to the
  client mid-call on the POST's SSE stream (impossible with ``--json-response``:
  the tool then fails, the SDK has no back-channel in legacy JSON mode).
  Returns ``"confirmed: <question>"``, ``"refused: <question>"`` or
  ``"<action>: <question>"`` for decline/cancel.
* prompt ``greet(name: str)`` and resource ``mcpeek://hello``

Options: ``--port PORT`` (0 = pick a free port; the line below shows the real one),
``--host`` (default 127.0.0.1), ``--path`` (default /mcp), ``--json-response``
(answer POSTs with ``application/json`` instead of ``text/event-stream``: the
response head then comes only once the call is done), ``--hold-weather FILE``.

DNS-rebinding protection is the SDK's default for a loopback ``--host``: Host must
be ``127.0.0.1:<any port>``, ``localhost:<any port>`` or ``[::1]:<any port>``
(421 otherwise) and an Origin, if present, ``http://`` one of those (403
otherwise).  For a non-loopback ``--host`` the SDK turns the check off.

Once the socket accepts connections, one line goes to stderr::

    sdk_http_server: listening on http://127.0.0.1:PORT/mcp

SIGTERM / SIGINT shut it down cleanly (exit 0) within ~2 s even with open streams.

Run:  python tests/peers/sdk_http_server.py --port 8765 [--json-response]
"""

from __future__ import annotations

import argparse
import asyncio
import signal
import sys
import threading
from pathlib import Path
from typing import Annotated

import uvicorn
from common_tools import add_common, add_weather
from mcp.server.mcpserver import (
    AcceptedElicitation,
    Elicit,
    ElicitationResult,
    MCPServer,
    Resolve,
)
from pydantic import BaseModel, Field

server: MCPServer = MCPServer(name="mcpeek-sdk-http-server", version="0.1.0", log_level="WARNING")

GRACEFUL_SHUTDOWN_S = 2
"""uvicorn's grace period for open connections (e.g. a legacy GET stream) on SIGTERM/SIGINT."""
SERVING = threading.Event()
"""Set once ``uvicorn.Server.serve()`` owns the signal handlers (see ``_exit_on_signal``)."""


add_common(server, "sdk_http_server")


class Confirmation(BaseModel):
    """What the client is asked to fill in."""

    confirm: bool = Field(description="yes (true) or no (false)")


def ask_confirmation(question: str) -> Elicit[Confirmation]:
    """Resolver: ask the client (elicitation, form mode) to answer ``question``."""
    return Elicit(question, Confirmation)


@server.tool()
def confirm(
    question: str,
    answer: Annotated[ElicitationResult[Confirmation], Resolve(ask_confirmation)],
) -> str:
    """Ask the client a yes/no question (an elicitation), then report the answer."""
    if isinstance(answer, AcceptedElicitation):
        return f"{'confirmed' if answer.data.confirm else 'refused'}: {question}"
    return f"{answer.action}: {question}"


async def serve(host: str, port: int, path: str, json_response: bool) -> None:
    # host= lets the SDK pick its default DNS-rebinding settings (on for loopback hosts).
    app = server.streamable_http_app(
        streamable_http_path=path, json_response=json_response, host=host
    )
    config = uvicorn.Config(
        app,
        host=host,
        port=port,
        log_level="warning",
        lifespan="on",
        timeout_graceful_shutdown=GRACEFUL_SHUTDOWN_S,
    )
    uv = uvicorn.Server(config)

    async def announce() -> None:
        # `started` flips once the lifespan (the SDK session manager) is up and the
        # listening sockets exist, i.e. when connections are really accepted.
        while not uv.started:
            if uv.should_exit:
                return
            await asyncio.sleep(0.02)
        bound = next(s.getsockname() for srv in uv.servers for s in srv.sockets)
        shown = "127.0.0.1" if host in ("0.0.0.0", "") else host
        shown = f"[{shown}]" if ":" in shown else shown
        url = f"http://{shown}:{bound[1]}{path}"
        print(f"sdk_http_server: listening on {url}", file=sys.stderr, flush=True)

    SERVING.set()
    watcher = asyncio.create_task(announce())
    try:
        await uv.serve()  # installs SIGINT/SIGTERM handlers -> graceful shutdown
    finally:
        watcher.cancel()
    if not uv.started:
        raise SystemExit(f"sdk_http_server: could not start on {host}:{port}")


def _exit_on_signal(signum: int, frame: object) -> None:
    """SIGTERM/SIGINT handler outside ``uvicorn.Server.serve()``.

    While serving, uvicorn's own handlers are installed (graceful shutdown, and a
    second SIGINT forces it).  On the way out uvicorn restores the previous handler
    -- this one -- and re-raises the signal it shut down for; that re-raise is
    ignored so the process exits 0 instead of dying of the signal (143/130).
    A signal that arrives before serving begins simply exits 0.
    """
    if not SERVING.is_set():
        raise SystemExit(0)


def main(argv: list[str] | None = None) -> int:
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, _exit_on_signal)
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, required=True, help="TCP port (0 = any free port)")
    parser.add_argument("--host", default="127.0.0.1", help="bind address (default 127.0.0.1)")
    parser.add_argument("--path", default="/mcp", help="endpoint path (default /mcp)")
    parser.add_argument(
        "--json-response",
        action="store_true",
        help="answer POSTs with application/json instead of an SSE stream",
    )
    parser.add_argument(
        "--hold-weather", type=Path, metavar="FILE", help="get_weather waits for FILE to exist"
    )
    args = parser.parse_args(argv)
    if args.hold_weather is not None:
        server.remove_tool("get_weather")
        add_weather(server, args.hold_weather)
    if not args.path.startswith("/"):
        parser.error("--path must start with '/'")
    asyncio.run(serve(args.host, args.port, args.path, args.json_response))
    return 0


if __name__ == "__main__":
    sys.exit(main())
