"""``mcpeek mcp``: the captures, offered to an assistant as an MCP server (official SDK).

Tools (each with an input and an output schema, answering structured
results): ``list_captures``, ``list_flows``, ``get_flow``, ``lint``,
``diff_captures``, ``explain_rule`` and ``replay_flow``. Resources: ``mcpeek://captures`` (the
list), one ``mcpeek://captures/{name}`` per capture, and that template.
Prompt: ``why_did_this_call_fail``. The SDK speaks both protocol eras, on
stdio and on Streamable HTTP.

Bad arguments are tool errors (``isError`` results with one line saying
what was wrong), a resource that does not exist a protocol error: never a
crash of the server.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Annotated, Any, Literal, TypeVar, cast
from urllib.parse import quote, unquote

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ResourceNotFoundError, ToolError
from mcp.shared.exceptions import MCPError
from mcp_types import Resource
from mcp_types.jsonrpc import INVALID_PARAMS
from pydantic import Field

from mcpeek.inspector import __version__
from mcpeek.inspector.assist.desk import AssistError, Desk
from mcpeek.inspector.assist.prompt import why_prompt
from mcpeek.inspector.assist.rerun import Rerunner
from mcpeek.inspector.assist.schemas import (
    CaptureList,
    DiffResult,
    FlowDetail,
    FlowPage,
    LintResult,
    ReplayOutcome,
    RuleExplanation,
)
from mcpeek.inspector.assist.shapes import capture_summary, flow_row

CaptureArg = Annotated[
    str, Field(description="a capture's name as list_captures gives it, or a path to one")
]
FlowArg = Annotated[int, Field(description="a flow's number, as list_flows and show number them")]
T = TypeVar("T")
INSTRUCTIONS = (
    "mcpeek recorded MCP traffic between clients and servers. list_captures shows the "
    "recordings; list_flows and get_flow show the calls (one flow is one logical call); "
    "lint and explain_rule say where the traffic breaks the MCP spec, and why; "
    "diff_captures compares two recordings; replay_flow sends one recorded call again "
    "to a live server and says what changed."
)


def answered(shape: type[T], call: Callable[[], dict[str, Any]]) -> T:
    """``call()``'s answer as the tool's declared ``shape`` (:mod:`.schemas`, which the SDK
    validates it against), with a wrong argument turned into an MCP tool error."""
    try:
        found = call()
    except AssistError as exc:
        raise ToolError(str(exc)) from None
    return cast(T, found)


class AssistServer(MCPServer[Any]):
    """The SDK's server, listing one resource per capture on the shelf."""

    def __init__(self, desk: Desk, rerunner: Rerunner) -> None:
        super().__init__(
            name="mcpeek",
            version=__version__,
            instructions=INSTRUCTIONS,
            log_level="WARNING",
        )
        self.desk = desk
        self.rerunner = rerunner

    async def list_resources(self) -> list[Resource]:
        listed = await super().list_resources()
        for path in self.desk.shelf.paths():
            listed.append(
                Resource(
                    uri=f"mcpeek://captures/{quote(path.name, safe='')}",
                    name=path.name,
                    description=f"the capture {path.name}: its summary and its flows",
                    mime_type="application/json",
                )
            )
        return listed


def build_server(desk: Desk, rerunner: Rerunner) -> AssistServer:
    server = AssistServer(desk, rerunner)

    @server.tool(structured_output=True)
    def list_captures() -> CaptureList:
        """The captures, newest first: target, transport, era, start, duration, messages,
        flows, violations by severity, and whether a proxy is still writing it (live)."""
        return answered(CaptureList, desk.list_captures)

    @server.tool(structured_output=True)
    def list_flows(
        capture: CaptureArg,
        filter: Annotated[
            str,
            Field(
                description="the viewer's filter language, e.g. '~m tools/call & ~v error', "
                "'~s error|unanswered', '~t >1s', or a bare word (empty: every flow)"
            ),
        ] = "",
        limit: Annotated[int, Field(description="flows per answer (1 to 1000)")] = 50,
        offset: Annotated[int, Field(description="flows to skip (for the next page)")] = 0,
    ) -> FlowPage:
        """The flows of a capture, one object each as `mcpeek show --format json` prints
        them, plus each flow's violation count and worst severity."""
        return answered(FlowPage, lambda: desk.list_flows(capture, filter, limit, offset))

    @server.tool(structured_output=True)
    def get_flow(capture: CaptureArg, flow: FlowArg) -> FlowDetail:
        """One flow: every message (direction, time, raw JSON; long bodies cut, with a
        note and their byte count) and its violations (rule id, severity, explanation,
        spec URL). What the capture redacted stays redacted."""
        return answered(FlowDetail, lambda: desk.get_flow(capture, flow))

    @server.tool(structured_output=True)
    def lint(
        capture: CaptureArg,
        min_severity: Annotated[
            Literal["error", "warning", "info"],
            Field(description="report violations at or above this level"),
        ] = "info",
    ) -> LintResult:
        """Check a capture against the MCP spec's rules, as `mcpeek lint --format json`."""
        return answered(LintResult, lambda: desk.lint(capture, min_severity))

    @server.tool(structured_output=True)
    def diff_captures(
        a: Annotated[str, Field(description="the first capture (a name or a path)")],
        b: Annotated[str, Field(description="the capture compared with a")],
    ) -> DiffResult:
        """Compare two captures as `mcpeek diff --format json`: the server surface (tools,
        resources, prompts, capabilities, versions), answers that differ for the same
        request, requests in one only, and each capture's drift and rug pulls."""
        return answered(DiffResult, lambda: desk.diff_captures(a, b))

    @server.tool(structured_output=True)
    def explain_rule(
        rule_id: Annotated[str, Field(description="a rule id, e.g. jsonrpc.id-type")],
    ) -> RuleExplanation:
        """What a rule checks, its severity and era, and the spec section it enforces."""
        return answered(RuleExplanation, lambda: desk.explain_rule(rule_id))

    @server.tool(structured_output=True)
    def replay_flow(
        capture: CaptureArg,
        flow: FlowArg,
        command: Annotated[
            list[str] | None,
            Field(description="a stdio server's command line (default: the recorded one)"),
        ] = None,
        url: Annotated[
            str | None,
            Field(description="an HTTP server's endpoint (default: the recorded one)"),
        ] = None,
    ) -> ReplayOutcome:
        """Send one recorded flow's request again to a live server and compare the
        answers. Only a command or URL the capture recorded is run, unless the user
        started `mcpeek mcp --allow-run`."""

        def run() -> dict[str, Any]:
            name, found = desk.open(capture)
            return rerunner.replay(name, found, flow, command, url)

        return answered(ReplayOutcome, run)

    @server.resource("mcpeek://captures", name="captures", mime_type="application/json")
    def captures_resource() -> str:
        """Every capture, newest first (what list_captures answers)."""
        return json.dumps(desk.list_captures(), ensure_ascii=False)

    @server.resource("mcpeek://captures/{name}", name="capture", mime_type="application/json")
    def capture_resource(name: str) -> str:
        """One capture: its summary and every flow, as list_flows gives them."""
        try:
            listed, found = desk.open(unquote(name))  # a name is quoted in its URI
        except AssistError as exc:
            raise ResourceNotFoundError(str(exc)) from None
        summary = capture_summary(listed, found)
        summary["flow_list"] = [flow_row(item) for item in found.model.items]
        return json.dumps(summary, ensure_ascii=False)

    @server.prompt(name="why_did_this_call_fail")
    def why_did_this_call_fail(capture: str, flow: str) -> str:
        """Why did this call fail? Gathers a flow, its violations and the spec they cite."""
        # An MCPError is the SDK's anticipated failure: the client gets it, the log no trace.
        try:
            number = int(flow)
        except ValueError:
            raise MCPError(INVALID_PARAMS, f"flow must be a flow's number, not {flow!r}") from None
        try:
            return why_prompt(desk.get_flow(capture, number))
        except AssistError as exc:
            raise MCPError(INVALID_PARAMS, str(exc)) from None

    return server
