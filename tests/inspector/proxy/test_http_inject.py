"""The headers and body of a POST mcpeek sends a server on its own (sans network)."""

from __future__ import annotations

import base64
import json

import pytest
from multidict import CIMultiDict

from mcpeek.inspector.act.verdicts import Outcome
from mcpeek.inspector.proxy.http_inject import HttpInjector
from mcpeek.inspector.proxy.http_meta import header_value
from mcpeek.inspector.records import Direction

ENVELOPE = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "c", "version": "1"},
}


async def never(direction: Direction, ch: str, raw: bytes) -> Outcome:
    raise AssertionError("nothing is decided here")


def injector(modern: bool) -> HttpInjector:
    made = HttpInjector(lambda records: None, never, lambda: "x9", lambda: None, "http://up")
    headers = CIMultiDict(
        [
            ("Host", "up"),
            ("Content-Length", "99"),
            ("MCP-Protocol-Version", "2026-07-28" if modern else "2025-11-25"),
            ("Accept", "text/event-stream"),
        ]
    )
    if modern:
        headers["Mcp-Method"] = "tools/list"
    else:
        headers["Mcp-Session-Id"] = "s1"
    params = {"_meta": ENVELOPE} if modern else {}
    body = json.dumps({"jsonrpc": "2.0", "id": 3, "method": "tools/list", "params": params})
    made.client_posted("/mcp?x=1", headers, body.encode())
    return made


@pytest.mark.parametrize(
    ("text", "sent"),
    [
        ("get_weather", "get_weather"),
        ("file:///a b.txt", "file:///a b.txt"),
        ("météo", None),
        (" padded", None),
        ("line\nbreak", None),
        ("=?base64?looks-encoded", None),
    ],
)
def test_a_name_header_is_plain_ascii_or_base64_wrapped(text: str, sent: str | None) -> None:
    value = header_value(text)
    if sent is not None:
        assert value == sent
    else:
        assert value.startswith("=?base64?") and value.endswith("?=")
        assert base64.b64decode(value[len("=?base64?") : -2]).decode() == text


def test_a_modern_post_carries_the_request_metadata_and_the_clients_envelope() -> None:
    made = injector(modern=True)
    call = {"jsonrpc": "2.0", "id": "mcpeek-1", "method": "tools/call", "params": {"name": "météo"}}
    line = json.dumps(call, ensure_ascii=False).encode()
    headers = made.post_headers(line)
    assert headers["Mcp-Method"] == "tools/call"
    assert headers["Mcp-Name"] == header_value("météo") != "météo"
    assert headers["MCP-Protocol-Version"] == "2026-07-28" and headers["Host"] == "up"
    assert "Content-Length" not in headers and "Mcp-Session-Id" not in headers
    assert headers["Accept"] == "application/json, text/event-stream"
    sent = json.loads(made.enveloped(line))
    assert sent["params"]["_meta"] == ENVELOPE and sent["params"]["name"] == "météo"
    own = {"io.modelcontextprotocol/protocolVersion": "2099-01-01"}  # what the person wrote
    written = {"jsonrpc": "2.0", "id": "mcpeek-2", "method": "tools/list", "params": {"_meta": own}}
    kept = json.loads(made.enveloped(json.dumps(written).encode()))
    assert kept["params"]["_meta"] == {**ENVELOPE, **own}
    note = b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}'
    assert made.enveloped(note) == note  # a notification carries no envelope


def test_a_legacy_post_carries_the_session_and_no_modern_metadata() -> None:
    made = injector(modern=False)
    line = b'{"jsonrpc":"2.0","id":"mcpeek-1","method":"ping"}'
    headers = made.post_headers(line)
    assert headers["Mcp-Session-Id"] == "s1" and headers["MCP-Protocol-Version"] == "2025-11-25"
    assert "Mcp-Method" not in headers and "Mcp-Name" not in headers
    assert made.enveloped(line) == line  # bytes as written
