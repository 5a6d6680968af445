"""Flows as spans: what each flow of a capture becomes in a trace, without OpenTelemetry.

:class:`SpanBuilder` listens to the :class:`~mcpeek.inspector.analysis.Analyzer`
and to the rule engine, and turns each ended flow into :class:`SpanData`, plain
values that :mod:`mcpeek.inspector.export.otel` hands to the OpenTelemetry SDK.
Keeping the mapping here, free of the SDK, lets it be read (and tested) without
the optional ``otel`` extra, and keeps one place for the decisions:

* one span per flow, kind CLIENT (mcpeek sees each call from where it is sent
  to where its answer comes back, as its sender does), named
  ``{mcp.method.name} {target}`` (:mod:`.semconv`);
* a multi round-trip request (``input_required`` → retry → … → result) is one
  span with a **child span per attempt**: each attempt has its own id, timing
  and result type;
* progress, log messages, other notifications of the flow and its
  cancellation are **span events** (named by their method), like the
  violations (``mcpeek.violation``, with rule id, severity, spec URL);
* a request whose ``_meta`` holds a valid W3C ``traceparent`` gets that trace
  id and the caller's span as its (remote) parent, so the span joins the
  agent's trace; any other flow is the root of a trace of its own;
* ids are derived from the capture (its header and the flow's number), so
  exporting a capture twice gives the same ids.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Any

from mcpeek.inspector.analysis import AnalysisListener, Attempt, Conversation, Entry, Flow
from mcpeek.inspector.export import semconv as sc
from mcpeek.inspector.export.spandata import (
    ERROR_STATUSES,
    Finding,
    SpanData,
    SpanEvent,
    error_of,
    nanos,
    notification_event,
    short,
    traceparent,
)
from mcpeek.inspector.records import Header


class SpanBuilder(AnalysisListener):
    """Collects the spans of the flows an Analyzer ends; :meth:`drain` hands them over.

    ``header`` gives the capture's header (the Analyzer keeps it). Violations come
    through :meth:`found` (the rule engine's callback); one that names a message
    of a span not yet drained becomes an event of it, a later one a span of its own.
    """

    def __init__(self, header: Callable[[], Header | None]) -> None:
        self._header = header
        self._spans: list[SpanData] = []
        self._by_seq: dict[int, SpanData] = {}  # the undrained spans, by their messages
        self._waiting: dict[int, list[Finding]] = {}  # violations of flows not yet ended
        self._times: dict[int, float] = {}  # seq → t of the messages in undrained spans
        self._last_t = 0.0
        self._lone = 0  # violations that became spans of their own (their ids count them)

    # -- the engine's findings -------------------------------------------------
    def found(self, finding: Finding) -> None:
        if not finding.msgs:
            self._spans.append(self._lone_violation(finding))
            return
        offending = finding.msgs[-1]  # (the others are context: a tools/list, say)
        span = self._by_seq.get(offending)
        if span is not None:
            span.events.append(self._violation_event(finding, self._times.get(offending)))
        else:  # its flow has not ended yet
            self._waiting.setdefault(offending, []).append(finding)

    # -- the analyser's flows --------------------------------------------------
    def on_message(self, entry: Entry, flow: Flow, conversation: Conversation) -> None:
        self._last_t = max(self._last_t, entry.t)

    def on_flow_end(self, flow: Flow, conversation: Conversation) -> None:
        if flow.late:
            return  # its span went out when it was declared unanswered
        header = self._header()
        transport = header.transport if header is not None else "stdio"
        target = header.target if header is not None else ""
        entries = flow.entries
        if not entries:
            return
        trace_id, span_id = self._ids(flow.number, 0)
        caller = traceparent(flow.request) if flow.request is not None else None
        if caller is not None:
            trace_id = caller.trace_id
        attributes: dict[str, Any] = {
            sc.MCPEEK_FLOW: flow.number,
            sc.MCPEEK_STATUS: flow.status,
            sc.MCPEEK_SENDER: flow.sender,
            sc.MCPEEK_CONVERSATION: conversation.key,
        }
        if flow.method is not None:
            attributes[sc.MCP_METHOD_NAME] = flow.method
        if flow.ids:
            attributes[sc.JSONRPC_REQUEST_ID] = sc.request_id(flow.ids[0])
        session = sc.session_id(conversation.key)
        if session is not None:
            attributes[sc.MCP_SESSION_ID] = session
        if conversation.protocol_version:
            attributes[sc.MCP_PROTOCOL_VERSION] = conversation.protocol_version
        attributes.update(sc.target_attributes(flow.method, flow.name))
        attributes.update(sc.transport_attributes(transport, target))
        start = entries[0].t
        end = max(e.t for e in entries)
        span = SpanData(
            name=sc.span_name(flow.method, flow.name),
            trace_id=trace_id,
            span_id=span_id,
            start_ns=nanos(start),
            end_ns=nanos(end),
            attributes=attributes,
            parent_id=caller.span_id if caller is not None else None,
            remote_parent=caller is not None,
            trace_state=caller.trace_state if caller is not None else None,
            sender=flow.sender,
            measured=flow.request is not None,
        )
        self._judge(flow, span)
        for entry in [*flow.notifications, *([flow.cancel] if flow.cancel else [])]:
            span.events.append(notification_event(entry))
        self._spans.append(span)
        for entry in entries:
            self._by_seq[entry.seq] = span
            self._times[entry.seq] = entry.t
            for finding in self._waiting.pop(entry.seq, ()):
                span.events.append(self._violation_event(finding, entry.t))
        if len(flow.attempts) > 1:
            for number, attempt in enumerate(flow.attempts, 1):
                self._spans.append(self._attempt_span(span, flow, attempt, number))

    def on_conversation_end(self, conversation: Conversation) -> None:
        # Findings whose messages belong to no flow (a torn line, an HTTP-level
        # rule) still reach the trace, as spans of their own.
        for seq, findings in list(self._waiting.items()):
            if seq not in self._by_seq:
                for finding in findings:
                    self._spans.append(self._lone_violation(finding))
                del self._waiting[seq]

    def drain(self) -> list[SpanData]:
        """The spans built since the last drain; a finding about one of them that
        comes later becomes a span of its own."""
        spans, self._spans = self._spans, []
        self._by_seq.clear()
        self._times.clear()
        return spans

    # -- pieces ------------------------------------------------------------------
    def _ids(self, number: int, part: int) -> tuple[int, int]:
        header = self._header()
        seed = f"{header.created if header else ''}|{header.target if header else ''}"
        digest = hashlib.sha256(f"{seed}|{number}|{part}".encode()).digest()
        trace_id = int.from_bytes(digest[:16], "big") or 1
        span_id = int.from_bytes(digest[16:24], "big") or 1
        return trace_id, span_id

    def _judge(self, flow: Flow, span: SpanData) -> None:
        """``error.type`` and the error status of a flow that failed."""
        if flow.status not in ERROR_STATUSES:
            return
        error_type = sc.STATUS_ERROR_TYPES.get(flow.status, "_OTHER")
        description = flow.status
        response = flow.response
        if flow.status == "error" and response is not None:
            error = error_of(response)
            if isinstance(error.code, int) and not isinstance(error.code, bool):
                error_type = str(error.code)
                span.attributes[sc.RPC_RESPONSE_STATUS_CODE] = error_type
            if isinstance(error.message, str):
                description = short(error.message)
        span.attributes[sc.ERROR_TYPE] = error_type
        span.error = description

    def _attempt_span(
        self, parent: SpanData, flow: Flow, attempt: Attempt, number: int
    ) -> SpanData:
        _, span_id = self._ids(flow.number, number)
        end = attempt.response.t if attempt.response is not None else attempt.request.t
        attributes = {
            k: v for k, v in parent.attributes.items() if k not in (sc.ERROR_TYPE, sc.MCPEEK_STATUS)
        }
        attributes[sc.JSONRPC_REQUEST_ID] = sc.request_id(attempt.request.id)
        attributes[sc.MCPEEK_ATTEMPT] = number
        if attempt.result_type is not None:
            attributes[sc.MCPEEK_RESULT_TYPE] = attempt.result_type
        return SpanData(
            name=parent.name,
            trace_id=parent.trace_id,
            span_id=span_id,
            start_ns=nanos(attempt.request.t),
            end_ns=nanos(end),
            attributes=attributes,
            parent_id=parent.span_id,
            trace_state=parent.trace_state,
            sender=parent.sender,
        )

    def _violation_event(self, finding: Finding, t: float | None) -> SpanEvent:
        return SpanEvent(
            sc.VIOLATION_EVENT,
            nanos(t if t is not None else self._last_t),
            {
                sc.RULE_ID: finding.rule,
                sc.RULE_SEVERITY: finding.severity,
                sc.RULE_SPEC: finding.spec,
                sc.RULE_MESSAGE: short(finding.message),
            },
        )

    def _lone_violation(self, finding: Finding) -> SpanData:
        self._lone += 1
        trace_id, span_id = self._ids(-self._lone, 0)
        event = self._violation_event(finding, None)
        return SpanData(
            name=f"{sc.VIOLATION_EVENT} {finding.rule}",
            trace_id=trace_id,
            span_id=span_id,
            start_ns=event.time_ns,
            end_ns=event.time_ns,
            attributes={sc.RULE_ID: finding.rule},
            events=[event],
        )
