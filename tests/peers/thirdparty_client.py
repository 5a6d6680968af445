"""Real-SDK client that tours whatever a third-party MCP server offers, over stdio or HTTP.

Usage::

    python tests/peers/thirdparty_client.py --era legacy|modern|auto
        [--call NAME=JSON]... [--progress-call NAME=JSON]... [--complete-prompt NAME:ARG]
        [--read URI]... [--subscribe URI]... [--client-features] [--cancel-call NAME=JSON]...
        [--linger S] (--url URL | -- CMD [ARG...])

The official ``mcp`` SDK client (no hand-written JSON-RPC) connects, then follows
the server's declared capabilities: ``tools/list``; with ``resources``:
``resources/list``, ``resources/templates/list`` and ``resources/read`` of the
first listed resource (and of each ``--read URI``), ``resources/subscribe`` of each
``--subscribe URI``; with ``prompts``:
``prompts/list`` and ``prompts/get`` of the first prompt that needs no argument;
with ``completions`` and ``--complete-prompt NAME:ARG``: ``completion/complete``
of that prompt argument; and before 2026-07-28 (which removed both), with
``logging``: ``logging/setLevel debug``, then a ``ping``. Then each ``--call`` in
order, and each ``--progress-call`` with a progress callback (the notifications it
counted go into the report). Then each ``--cancel-call``, cancelled once its
first progress notification arrives; ``--linger S`` keeps the session open S
seconds more, so that what the server sends after that crosses the wire.
``--client-features`` answers the server's sampling (a canned text), elicitation
(decline) and roots (``file:///tmp``) requests, so the client declares them.

Prints ONE JSON object to stdout and exits 0::

    {"protocol_version", "server", "capabilities", "tools", "resources", "prompts",
     "calls": {NAME: text}, "progress": {NAME: count}, "completions": [...], "logs": n}

A tool result with ``isError`` is reported, not raised (its text is prefixed with
``error: ``): the test decides. Any other failure: message and traceback on
stderr, exit 1 (usage errors: exit 2). Deadline 40 s for the conversation.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

import anyio
import mcp_types as types
from conversation import EXPECTED_VERSION, MODES, hold, text
from mcp import Client
from mcp.client.session import ClientRequestContext
from mcp.client.stdio import StdioServerParameters
from mcp_types.version import LATEST_MODERN_VERSION

DEADLINE_S = 40.0
LOG_LEVEL = "io.modelcontextprotocol/logLevel"


def parse_call(spec: str) -> tuple[str, dict[str, Any]]:
    name, _, args = spec.partition("=")
    return name, json.loads(args) if args else {}


def client_features(report: dict[str, Any]) -> dict[str, Any]:
    """Sampling, elicitation and roots callbacks (``--client-features``): with them the
    client declares those capabilities, and a server may ask for them. Each request
    the server makes is counted in ``report["asked"]``."""
    asked: dict[str, int] = report.setdefault("asked", {})

    def count(method: str) -> None:
        asked[method] = asked.get(method, 0) + 1

    async def sample(
        context: ClientRequestContext, params: types.CreateMessageRequestParams
    ) -> types.CreateMessageResult:
        count("sampling/createMessage")
        reply = types.TextContent(type="text", text="sampled")
        return types.CreateMessageResult(role="assistant", content=reply, model="mcpeek-test")

    async def elicit(
        context: ClientRequestContext, params: types.ElicitRequestParams
    ) -> types.ElicitResult:
        count("elicitation/create")
        return types.ElicitResult(action="decline")

    async def roots(context: ClientRequestContext) -> types.ListRootsResult:
        count("roots/list")
        return types.ListRootsResult(roots=[types.Root(uri="file:///tmp", name="tmp")])

    return {
        "sampling_callback": sample,
        "elicitation_callback": elicit,
        "list_roots_callback": roots,
    }


async def cancel_after_first_progress(client: Client, name: str, arguments: dict[str, Any]) -> None:
    """Call a tool and cancel the call (the SDK sends notifications/cancelled) as soon
    as its first progress notification arrives."""
    first = anyio.Event()

    async def on_progress(progress: float, total: float | None, msg: str | None) -> None:
        first.set()

    async with anyio.create_task_group() as group:

        async def call() -> None:
            await client.call_tool(name, arguments, progress_callback=on_progress)

        group.start_soon(call)
        await first.wait()
        group.cancel_scope.cancel()


async def tour(args: argparse.Namespace, command: list[str]) -> dict[str, Any]:
    server: StdioServerParameters | str = (
        args.url
        if args.url
        else StdioServerParameters(command=command[0], args=command[1:], env=dict(os.environ))
    )
    logs: list[str] = []

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        logs.append(str(params.level))

    client_info = types.Implementation(name="mcpeek-thirdparty-client", version="0.1.0")
    report: dict[str, Any] = {
        "calls": {},
        "progress": {},
        "completions": [],
        "read": {},
        "cancelled": [],
    }
    features = client_features(report) if args.client_features else {}
    async with Client(
        server,
        **features,
        mode=MODES[args.era],
        client_info=client_info,
        cache=None,  # every list and call must reach the wire
        read_timeout_seconds=DEADLINE_S,
        logging_callback=on_log,
    ) as client:
        version = client.protocol_version
        if args.era in EXPECTED_VERSION and version != EXPECTED_VERSION[args.era]:
            raise RuntimeError(f"negotiated {version!r}, expected {EXPECTED_VERSION[args.era]!r}")
        caps = client.server_capabilities
        report["protocol_version"] = version
        report["server"] = client.server_info.name if client.server_info else None
        offered = [k for k, v in caps.model_dump().items() if v is not None] if caps else []
        report["capabilities"] = sorted(offered)
        report["tools"] = [t.name for t in (await client.list_tools()).tools]
        if "resources" in offered:
            resources = (await client.list_resources()).resources
            report["resources"] = [str(r.uri) for r in resources]
            await client.list_resource_templates()
            for uri in ([str(resources[0].uri)] if resources else []) + args.read:
                contents = (await client.read_resource(uri)).contents
                report["read"][uri] = len(contents)
        for uri in args.subscribe:
            await client.subscribe_resource(uri)
        if "prompts" in offered:
            prompts = (await client.list_prompts()).prompts
            report["prompts"] = [p.name for p in prompts]
            bare = [p for p in prompts if not any(a.required for a in p.arguments or [])]
            if bare:
                await client.get_prompt(bare[0].name, {})
        if "completions" in offered and args.complete_prompt:
            prompt, _, argument = args.complete_prompt.partition(":")
            ref = types.PromptReference(name=prompt)
            done = await client.complete(ref, {"name": argument, "value": ""})
            report["completions"] = done.completion.values
        if version != LATEST_MODERN_VERSION:  # 2026-07-28 removed both
            if "logging" in offered:
                await client.set_logging_level("debug")
            await client.send_ping()
        for spec in args.call:
            name, arguments = parse_call(spec)
            result = await client.call_tool(name, arguments)
            report["calls"][name] = ("error: " if result.is_error else "") + text(result)
        for spec in args.progress_call:
            name, arguments = parse_call(spec)
            updates: list[float] = []

            async def on_progress(
                progress: float, total: float | None, msg: str | None, seen: list[float] = updates
            ) -> None:
                seen.append(progress)

            meta: Any = {LOG_LEVEL: args.log_level} if args.log_level else None
            result = await client.call_tool(
                name, arguments, progress_callback=on_progress, meta=meta
            )
            report["calls"][name] = ("error: " if result.is_error else "") + text(result)
            report["progress"][name] = len(updates)
        for spec in args.cancel_call:
            name, arguments = parse_call(spec)
            await cancel_after_first_progress(client, name, arguments)
            report["cancelled"].append(name)
        if args.linger:  # what the server still sends after a cancellation crosses the wire
            await anyio.sleep(args.linger)
    report["logs"] = len(logs)
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Tour a third-party MCP server with the SDK.")
    parser.add_argument("--era", choices=["modern", "legacy", "auto"], required=True)
    parser.add_argument("--url", help="a Streamable HTTP endpoint instead of a stdio command")
    parser.add_argument("--call", action="append", default=[], metavar="NAME=JSON")
    parser.add_argument("--progress-call", action="append", default=[], metavar="NAME=JSON")
    parser.add_argument(
        "--client-features",
        action="store_true",
        help="answer sampling (a canned text), elicitation (decline) and roots (file:///tmp)",
    )
    parser.add_argument(
        "--log-level", help="2026-07-28: ask for log messages in each --progress-call's _meta"
    )
    parser.add_argument("--cancel-call", action="append", default=[], metavar="NAME=JSON")
    parser.add_argument("--linger", type=float, default=0.0, metavar="SECONDS")
    parser.add_argument("--complete-prompt", metavar="NAME:ARG")
    parser.add_argument("--read", action="append", default=[], metavar="URI")
    parser.add_argument("--subscribe", action="append", default=[], metavar="URI")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="-- CMD [ARG...]")
    args = parser.parse_args(argv)
    command: list[str] = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command and not args.url:
        parser.error("missing --url or a server command after --")
    return hold(
        "thirdparty_client",
        args.era,
        lambda: tour(args, command),
        DEADLINE_S,
        f"no complete tour within {DEADLINE_S:g} s",
    )


if __name__ == "__main__":
    sys.exit(main())
