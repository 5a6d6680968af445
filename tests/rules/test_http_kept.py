"""What the HTTP rules keep of a client message that waits for its response head.

:mod:`mcpeek.rules.families._http_kept`: the message's facts and the few parts
of its params the rules read, not its bytes nor its whole params, with the
same findings as the whole message would give.
"""

from __future__ import annotations

import base64
from typing import Any

import msgspec
import pytest

from mcpeek.inspector.analysis import Analyzer, Entry
from mcpeek.inspector.jsonrpc import MessageDecoder
from mcpeek.inspector.records import Msg, wire_bytes, wire_start
from mcpeek.rules.context import MessageContext
from mcpeek.rules.engine import RuleEngine
from mcpeek.rules.families._http_kept import KeptMessage, excerpt_record, keep
from mcpeek.rules.reported import EXCERPT, excerpt
from mcpeek.rules.testing import lint_records
from tests.rules.test_http import SQL_TOOL, modern_conversation

MCP_VERSION = "io.modelcontextprotocol/protocolVersion"


def context_of(message: dict[str, Any], tools: dict[str, Any] | None = None) -> MessageContext:
    """The context the engine would build for ``message``, a client's on exchange x1."""
    contexts: list[MessageContext] = []

    class Grab(RuleEngine):
        def on_message(self, entry: Entry, flow: Any, conversation: Any) -> None:
            conversation.declared.tools.update(tools or {})
            contexts.append(MessageContext(entry, flow, conversation, MessageDecoder(), None, None))

    record = Msg(dir="c2s", ch="stdio", raw=msgspec.json.encode(message).decode(), seq=1, t=1.0)
    Analyzer([Grab(lambda _: None)]).feed(record)
    (ctx,) = contexts
    return ctx


def test_a_kept_call_holds_what_the_header_rules_read_and_not_its_bulk() -> None:
    bulk = "x" * 100_000
    arguments = {"region": "us-west1", "shard": 42, "query": bulk, "extra": [bulk]}
    params = {
        "name": "execute_sql",
        "arguments": arguments,
        "_meta": {MCP_VERSION: "2026-07-28", "pad": bulk},
    }
    ctx = context_of(
        {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": params},
        {"execute_sql": SQL_TOOL},
    )
    kept = keep(ctx)
    assert kept.params == {
        "name": "execute_sql",
        "arguments": {"region": "us-west1", "shard": 42},  # what the x-mcp-headers name
        "_meta": {MCP_VERSION: "2026-07-28"},
    }
    assert kept.meta == {MCP_VERSION: "2026-07-28"}
    assert kept.tool is SQL_TOOL  # as declared when the call was sent
    assert (kept.seq, kept.kind, kept.method, kept.entry.id) == (1, "request", "tools/call", 3)
    assert len(wire_bytes(kept.entry.record)) <= EXCERPT + 1  # not the message's bytes
    assert excerpt(kept.entry) == excerpt(ctx.entry)
    with pytest.raises(AttributeError, match="not kept"):
        _ = kept.result  # a member nobody keeps is not decoded from what is left


def test_a_call_of_a_tool_without_header_annotations_keeps_no_arguments() -> None:
    ctx = context_of(
        {
            "jsonrpc": "2.0",
            "id": 4,
            "method": "tools/call",
            "params": {"name": "plain", "arguments": {"a": "x" * 1000}, "uri": 7},
        }
    )
    assert keep(ctx).params == {"name": "plain", "arguments": None}  # (uri: not a string)


@pytest.mark.parametrize(
    "text",
    [
        "a" * (EXCERPT + 50),
        "é" * (EXCERPT * 2),  # two bytes a character
        "\U0001f600" * EXCERPT,  # four
        "x" * (EXCERPT - 1) + "\udcff" * 40,  # bytes that are not UTF-8, as surrogates
        "short",
        "a" * EXCERPT,
        "a" * (EXCERPT + 1),
    ],
)
def test_the_start_of_a_message_gives_the_whole_ones_excerpt(text: str) -> None:
    record = Msg(dir="c2s", ch="x1", raw=text, seq=1)
    entry = Entry(1, 1.0, "c2s", "x1", "request", 1, "ping", record)
    shown = entry.wire().decode("utf-8", "replace")
    whole = shown if len(shown) <= EXCERPT else shown[: EXCERPT - 1] + "…"
    assert excerpt(entry) == whole
    kept = msgspec.structs.replace(entry, record=excerpt_record(record))
    assert excerpt(kept) == whole
    assert wire_bytes(record).startswith(wire_start(record, EXCERPT + 1))


def test_the_start_of_bytes_that_are_not_utf8_gives_the_whole_ones_excerpt() -> None:
    data = b"\xff\xfe" + "é".encode() * 2000
    record = Msg(dir="c2s", ch="x1", raw_b64=base64.b64encode(data).decode(), seq=1)
    entry = Entry(1, 1.0, "c2s", "x1", "invalid", None, None, record)
    kept = msgspec.structs.replace(entry, record=excerpt_record(record))
    assert len(kept.record.raw_b64 or "") < 4 * EXCERPT * 2
    assert excerpt(kept) == excerpt(entry)


def test_a_kept_message_is_judged_as_before() -> None:
    # http.param-header and http.name-header on calls kept for their response head.
    w = modern_conversation()
    w.post(
        "tools/call",
        {"name": "execute_sql", "arguments": {"region": "eu", "shard": 7, "query": "q"}},
        id=9,
        add=(("mcp-param-region", "us"),),
    )
    found = {(v.rule, v.message) for v in lint_records(w.records)}
    assert any(rule == "http.param-header" and "Mcp-Param-Shard" in m for rule, m in found)
    assert any(rule == "http.param-header" and "Mcp-Param-Region" in m for rule, m in found)
    assert isinstance(keep(context_of({"jsonrpc": "2.0", "method": "x"})), KeptMessage)


@pytest.mark.parametrize(
    ("raw_params", "slim"),
    [
        ('{"name":"a","name":"b","uri":3}', {"name": "b"}),  # the last of a repeated member
        ('{"name":"a","_meta":null}', {"name": "a"}),  # not an object: read decoded whole
        ('{"uri":"u","_meta":{"x":1}}', {"uri": "u", "_meta": {}}),
        ('{"name":1e999,"_meta":{"' + MCP_VERSION + '":"v"}}', {"_meta": {MCP_VERSION: "v"}}),
        ("[1, 2]", None),
        ("null", None),
    ],
)
def test_the_params_kept_are_those_the_whole_decode_gives(raw_params: str, slim: Any) -> None:
    message = '{"jsonrpc":"2.0","id":1,"method":"prompts/get","params":' + raw_params + "}"
    contexts: list[MessageContext] = []

    class Grab(RuleEngine):
        def on_message(self, entry: Entry, flow: Any, conversation: Any) -> None:
            for _ in range(2):  # one for keep, one decoded whole first
                contexts.append(
                    MessageContext(entry, flow, conversation, MessageDecoder(), None, None)
                )

    Analyzer([Grab(lambda _: None)]).feed(Msg(dir="c2s", ch="stdio", raw=message, seq=1, t=1.0))
    quick, whole = contexts
    _ = whole.params  # (as when a rule decoded them before the tracker kept the message)
    assert keep(quick).params == keep(whole).params == slim
