"""What a flow is called in OpenTelemetry: the MCP semantic conventions, pinned.

mcpeek follows the OpenTelemetry semantic conventions for the Model Context
Protocol as published in **semantic conventions v1.44.0** (``gen-ai/mcp.md``;
the names ``opentelemetry-semantic-conventions`` 0.66b2 ships in
``_incubating.attributes.mcp_attributes``; their home is now the GenAI
conventions repository, whose v0.1.0 keeps the same names). The names are
written out here rather than imported from the incubating module, which may
rename or drop them in any release: the pin is this file.

Everything a value here is made of comes from the capture, which holds only
what its redaction let through, so no attribute can reveal a redacted secret.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urlsplit

import msgspec

SEMCONV_VERSION = "1.44.0"
SCHEMA_URL = f"https://opentelemetry.io/schemas/{SEMCONV_VERSION}"

MCP_METHOD_NAME = "mcp.method.name"
MCP_SESSION_ID = "mcp.session.id"
MCP_PROTOCOL_VERSION = "mcp.protocol.version"
MCP_RESOURCE_URI = "mcp.resource.uri"
JSONRPC_REQUEST_ID = "jsonrpc.request.id"
GEN_AI_TOOL_NAME = "gen_ai.tool.name"
GEN_AI_PROMPT_NAME = "gen_ai.prompt.name"
GEN_AI_OPERATION_NAME = "gen_ai.operation.name"
NETWORK_TRANSPORT = "network.transport"
NETWORK_PROTOCOL_NAME = "network.protocol.name"
SERVER_ADDRESS = "server.address"
SERVER_PORT = "server.port"
ERROR_TYPE = "error.type"
RPC_RESPONSE_STATUS_CODE = "rpc.response.status_code"

CLIENT_DURATION = "mcp.client.operation.duration"
SERVER_DURATION = "mcp.server.operation.duration"
#: The conventions' advice for both duration histograms, in seconds.
DURATION_BUCKETS = (0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0)
#: The attributes the histograms keep: few values each, so the series stay few.
METRIC_ATTRIBUTES = (
    MCP_METHOD_NAME,
    GEN_AI_TOOL_NAME,
    GEN_AI_PROMPT_NAME,
    ERROR_TYPE,
    NETWORK_TRANSPORT,
    MCP_PROTOCOL_VERSION,
)

# mcpeek's own names, for what the conventions do not cover.
MCPEEK_FLOW = "mcpeek.flow"
MCPEEK_STATUS = "mcpeek.flow.status"
MCPEEK_CONVERSATION = "mcpeek.conversation"
MCPEEK_SENDER = "mcpeek.sender"
MCPEEK_ATTEMPT = "mcpeek.attempt"
MCPEEK_RESULT_TYPE = "mcpeek.result_type"
VIOLATION_EVENT = "mcpeek.violation"
RULE_ID = "mcpeek.rule.id"
RULE_SEVERITY = "mcpeek.rule.severity"
RULE_SPEC = "mcpeek.rule.spec_url"
RULE_MESSAGE = "mcpeek.violation.message"

#: error.type for a flow that ended without a JSON-RPC error code.
STATUS_ERROR_TYPES = {
    "tool-error": "tool_error",
    "cancelled": "cancelled",
    "unanswered": "timeout",
}

_TRACEPARENT = re.compile(r"^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$")


def span_name(method: str | None, target: str | None) -> str:
    """``{mcp.method.name} {target}``, the target being a tool or prompt name only:
    a resource URI would give a span name per resource (the conventions say not to)."""
    name = method or "(no method)"
    if target and method in ("tools/call", "prompts/get"):
        return f"{name} {target}"
    return name


def target_attributes(method: str | None, target: str | None) -> dict[str, Any]:
    """``gen_ai.tool.name``, ``gen_ai.prompt.name`` or ``mcp.resource.uri``."""
    if not target:
        return {}
    if method == "tools/call":
        return {GEN_AI_TOOL_NAME: target, GEN_AI_OPERATION_NAME: "execute_tool"}
    if method == "prompts/get":
        return {GEN_AI_PROMPT_NAME: target}
    if method is not None and method.startswith("resources/"):
        return {MCP_RESOURCE_URI: target}
    return {}


def transport_attributes(transport: str, target: list[str] | str) -> dict[str, Any]:
    """``network.transport`` (``pipe`` for stdio, ``tcp`` for HTTP) and, for HTTP,
    the upstream's host and port (never its path or query: those may be redacted)."""
    if transport != "http":
        return {NETWORK_TRANSPORT: "pipe"}
    out: dict[str, Any] = {NETWORK_TRANSPORT: "tcp", NETWORK_PROTOCOL_NAME: "http"}
    if isinstance(target, str):
        try:
            parts = urlsplit(target)
            port = parts.port
        except ValueError:
            return out
        if parts.hostname:
            out[SERVER_ADDRESS] = parts.hostname
        if port is not None:
            out[SERVER_PORT] = port
    return out


def session_id(conversation_key: str) -> str | None:
    """The ``Mcp-Session-Id`` of an HTTP session's conversation (``http:session:ID``)."""
    prefix = "http:session:"
    return conversation_key[len(prefix) :] if conversation_key.startswith(prefix) else None


def request_id(value: Any) -> str:
    """``jsonrpc.request.id`` is a string: a string id as itself, any other as its JSON
    (``7``, ``1.5``, ``null``, ``true``: an odd id, which the rules flag, stays visible)."""
    if isinstance(value, str):
        return value
    try:
        return msgspec.json.encode(value).decode()
    except (TypeError, msgspec.EncodeError):  # (not a JSON value: nothing the decoder gives)
        return repr(value)


def parse_traceparent(value: Any) -> tuple[int, int] | None:
    """The (trace id, parent span id) of a W3C ``traceparent``, or ``None`` when it
    is not a valid one (version ``ff`` and all-zero ids are invalid)."""
    if not isinstance(value, str):
        return None
    found = _TRACEPARENT.match(value.strip())
    if found is None or found.group(1) == "ff":
        return None
    trace_id, span_id = int(found.group(2), 16), int(found.group(3), 16)
    if trace_id == 0 or span_id == 0:
        return None
    return trace_id, span_id
