"""``mcpeek export --format otlp-json``: the spans of a capture in the OTLP JSON encoding.

The file must be OTLP JSON (hex ids, integer enums, lowerCamelCase names, each
line an export request that the OTLP protobuf messages accept), and its spans
must follow the MCP semantic conventions: names, attributes, the MRTR attempts
as child spans, progress as events, violations as events, errors as status,
and a caller's ``traceparent`` as the parent.
"""

from __future__ import annotations

import base64
import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
from google.protobuf import json_format
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from mcpeek.inspector.capture.writer import CaptureWriter
from mcpeek.inspector.records import Msg
from tests.conftest import mcpeek_argv
from tests.inspector.export.conftest import (
    AWS_KEY,
    BEARER,
    CALLER_SPAN,
    CALLER_TRACE,
    CAPTURES,
    GITHUB_TOKEN,
)

SPAN_KIND_CLIENT = 3
STATUS_ERROR = 2


def export_lines(capture: Path) -> list[dict[str, Any]]:
    done = subprocess.run(
        mcpeek_argv("export", str(capture), "--format", "otlp-json"),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in done.stdout.splitlines()]


def spans_of(document: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        span
        for resource in document["resourceSpans"]
        for scope in resource["scopeSpans"]
        for span in scope["spans"]
    ]


def attributes(item: dict[str, Any]) -> dict[str, Any]:
    """An OTLP JSON attribute list as {key: {"stringValue"|"intValue"|…: value}}."""
    return {attribute["key"]: attribute["value"] for attribute in item.get("attributes", [])}


def as_protobuf_json(value: Any) -> Any:
    """OTLP JSON back to protobuf's JSON mapping (ids in Base64), for the parser."""
    if isinstance(value, dict):
        return {
            k: base64.b64encode(bytes.fromhex(v)).decode()
            if k in ("traceId", "spanId", "parentSpanId") and isinstance(v, str)
            else as_protobuf_json(v)
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [as_protobuf_json(v) for v in value]
    return value


def test_the_file_is_otlp_json() -> None:
    traces, metrics = export_lines(CAPTURES / "modern-http-sse.jsonl")
    # Each line is an export request the OTLP protobuf schema accepts, field by field
    # (ParseDict refuses an unknown or misspelt name).
    json_format.ParseDict(as_protobuf_json(traces), ExportTraceServiceRequest())
    json_format.ParseDict(as_protobuf_json(metrics), ExportMetricsServiceRequest())
    spans = spans_of(traces)
    assert spans
    for span in spans:
        assert re.fullmatch(r"[0-9a-f]{32}", span["traceId"])  # hex, not Base64
        assert re.fullmatch(r"[0-9a-f]{16}", span["spanId"])
        assert span["kind"] == SPAN_KIND_CLIENT  # an enum as its integer
        assert int(span["endTimeUnixNano"]) >= int(span["startTimeUnixNano"]) > 0
    names = {
        m["name"]
        for r in metrics["resourceMetrics"]
        for s in r["scopeMetrics"]
        for m in s["metrics"]
    }
    assert names == {"mcp.client.operation.duration", "mcp.server.operation.duration"}


def test_flows_follow_the_mcp_conventions() -> None:
    (traces, _) = export_lines(CAPTURES / "modern-http-sse.jsonl")
    spans = spans_of(traces)
    by_name: dict[str, list[dict[str, Any]]] = {}
    for span in spans:
        by_name.setdefault(span["name"], []).append(span)
    assert {
        "server/discover",
        "tools/list",
        "tools/call add",
        "tools/call count",
        "tools/call get_weather",
        "tools/call confirm",
        "resources/read",
        "prompts/get greet",
    } <= set(by_name)
    (add,) = by_name["tools/call add"]
    add_attributes = attributes(add)
    assert add_attributes["mcp.method.name"] == {"stringValue": "tools/call"}
    assert add_attributes["gen_ai.tool.name"] == {"stringValue": "add"}
    assert add_attributes["gen_ai.operation.name"] == {"stringValue": "execute_tool"}
    assert add_attributes["jsonrpc.request.id"] == {"stringValue": "3"}
    assert add_attributes["mcp.protocol.version"] == {"stringValue": "2026-07-28"}
    assert add_attributes["network.transport"] == {"stringValue": "tcp"}
    assert "parentSpanId" not in add  # no caller's context: a root
    (read,) = by_name["resources/read"]
    assert attributes(read)["mcp.resource.uri"] == {"stringValue": "mcpeek://hello"}
    assert attributes(by_name["prompts/get greet"][0])["gen_ai.prompt.name"] == {
        "stringValue": "greet"
    }
    (count,) = by_name["tools/call count"]
    progress = [e for e in count["events"] if e["name"] == "notifications/progress"]
    assert [attributes(e)["mcp.params.progress"] for e in progress] == [
        {"intValue": "1"},
        {"intValue": "2"},
        {"intValue": "3"},
    ]
    # The multi round-trip call: one span, a child per attempt, in the same trace.
    confirm = by_name["tools/call confirm"]
    (parent,) = [s for s in confirm if "parentSpanId" not in s]
    children = [s for s in confirm if s.get("parentSpanId") == parent["spanId"]]
    assert len(children) == 2 and len(confirm) == 3
    assert {c["traceId"] for c in children} == {parent["traceId"]}
    assert [attributes(c)["jsonrpc.request.id"]["stringValue"] for c in children] == ["6", "7"]
    assert attributes(children[0])["mcpeek.result_type"] == {"stringValue": "input_required"}


def test_violations_and_errors() -> None:
    (traces, _) = export_lines(CAPTURES / "violations.jsonl")
    spans = spans_of(traces)
    events = [
        (span["name"], attributes(event))
        for span in spans
        for event in span.get("events", [])
        if event["name"] == "mcpeek.violation"
    ]
    rules = {e["mcpeek.rule.id"]["stringValue"]: (name, e) for name, e in events}
    assert {
        "tools.output-schema",
        "progress.not-increasing",
        "response.unknown-id",
        "result.result-type-missing",
    } <= set(rules)
    name, event = rules["tools.output-schema"]
    assert name == "tools/call add"
    assert event["mcpeek.rule.severity"] == {"stringValue": "error"}
    assert event["mcpeek.rule.spec_url"]["stringValue"].startswith(
        "https://modelcontextprotocol.io/specification/"
    )
    unanswered = [
        s for s in spans if attributes(s).get("mcpeek.flow.status") == {"stringValue": "unanswered"}
    ]
    assert unanswered
    for span in unanswered:
        assert span["status"]["code"] == STATUS_ERROR
        assert attributes(span)["error.type"] == {"stringValue": "timeout"}


def test_a_callers_traceparent_makes_the_parent_and_redaction_holds(
    secret_capture: Path,
) -> None:
    text = subprocess.run(
        mcpeek_argv("export", str(secret_capture), "--format", "otlp-json"),
        capture_output=True,
        text=True,
        timeout=120,
    ).stdout
    for secret in (BEARER, AWS_KEY, GITHUB_TOKEN):
        assert secret not in text
    traces = json.loads(text.splitlines()[0])
    (span,) = spans_of(traces)
    assert span["traceId"] == CALLER_TRACE
    assert span["parentSpanId"] == CALLER_SPAN
    assert span["traceState"] == "vendor=abc"  # the caller's tracestate goes on
    span_attributes = attributes(span)
    assert span_attributes["mcp.session.id"] == {"stringValue": "sess-1"}
    assert span_attributes["gen_ai.tool.name"]["stringValue"].startswith("<redacted")
    assert span_attributes["error.type"] == {"stringValue": "tool_error"}
    assert span["status"]["code"] == STATUS_ERROR
    (event,) = [e for e in span["events"] if e["name"] == "notifications/progress"]
    assert "<redacted" in attributes(event)["mcp.params.message"]["stringValue"]


@pytest.mark.parametrize("capture", ["modern-stdio.jsonl", "legacy-stdio.jsonl"])
def test_the_ids_are_the_same_each_time(capture: str) -> None:
    first = [(s["traceId"], s["spanId"]) for s in spans_of(export_lines(CAPTURES / capture)[0])]
    again = [(s["traceId"], s["spanId"]) for s in spans_of(export_lines(CAPTURES / capture)[0])]
    assert first == again and len(set(first)) == len(first)


def test_cancellation_and_a_json_rpc_error(tmp_path: Path) -> None:
    path = tmp_path / "stdio.jsonl"
    writer = CaptureWriter(path, transport="stdio", target=["server"])

    def message(direction: str, **fields: object) -> Msg:
        return Msg(dir=direction, ch="stdio", raw=json.dumps({"jsonrpc": "2.0", **fields}))

    writer.write_many(
        [
            message("c2s", id=1, method="tools/call", params={"name": "slow", "arguments": {}}),
            message(
                "c2s",
                method="notifications/cancelled",
                params={"requestId": 1, "reason": "user gave up"},
            ),
            message("c2s", id=2, method="nope/nothing"),
            message("s2c", id=2, error={"code": -32601, "message": "Method not found"}),
        ]
    )
    writer.close()
    spans = {s["name"]: s for s in spans_of(export_lines(path)[0])}
    cancelled = spans["tools/call slow"]
    assert attributes(cancelled)["error.type"] == {"stringValue": "cancelled"}
    assert cancelled["status"]["code"] == STATUS_ERROR
    (event,) = [e for e in cancelled["events"] if e["name"] == "notifications/cancelled"]
    assert attributes(event)["mcp.params.reason"] == {"stringValue": "user gave up"}
    failed = spans["nope/nothing"]
    assert attributes(failed)["error.type"] == {"stringValue": "-32601"}
    assert attributes(failed)["rpc.response.status_code"] == {"stringValue": "-32601"}
    assert failed["status"] == {"code": STATUS_ERROR, "message": "Method not found"}
    assert attributes(failed)["network.transport"] == {"stringValue": "pipe"}
