"""The protocol's own long words are no reason to run the secret plugins; a secret
beside or glued to one is still found."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator

import pytest

from mcpeek.inspector.capture.redact_detect import SecretDetector, candidates
from mcpeek.inspector.capture.redact_text import redact_message
from mcpeek.inspector.capture.redact_words import PROTOCOL_WORDS
from tests.conftest import VENDORED_SPEC
from tests.inspector.capture.test_redact import JSON_SECRETS
from tests.inspector.capture.test_redact_cost import _Spy

META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
    "io.modelcontextprotocol/clientInfo": {"name": "client", "version": "1.0"},
}
REQUEST = {
    "jsonrpc": "2.0",
    "id": 7,
    "method": "tools/call",
    "params": {"name": "get_weather", "arguments": {"city": "Paris"}, "_meta": META},
}
TOOL = {
    "name": "search",
    "inputSchema": {
        "type": "object",
        "properties": {"q": {"type": "string"}},
        "additionalProperties": False,
        "patternProperties": {"^x-": {"type": "string"}},
    },
}


def _tools(count: int) -> str:
    return json.dumps({"jsonrpc": "2.0", "id": 2, "result": {"tools": [TOOL] * count}})


MODERN = {
    "request": json.dumps(REQUEST),
    "result": json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 7,
            "result": {
                "content": [{"type": "text", "text": "Sunny"}],
                "structuredContent": {"t": 21},
                "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "s", "version": "1"}},
            },
        }
    ),
    "not-ascii": json.dumps(
        {**REQUEST, "params": {"name": "météo", "_meta": META}}, ensure_ascii=False
    ),
    "tools-list": _tools(3),
    "long-tools-list": _tools(60),  # past the size scanned whole: windows around runs
}


def _schema_names(node: object) -> Iterator[str]:
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "properties" and isinstance(value, dict):
                yield from value
            if key == "const" and isinstance(value, str):
                yield value
            if key == "enum" and isinstance(value, list):
                yield from (v for v in value if isinstance(v, str))
            yield from _schema_names(value)
    elif isinstance(node, list):
        for item in node:
            yield from _schema_names(item)


def test_the_words_hold_every_long_run_the_schemas_spell() -> None:
    # A member name or constant the next schema adds, with a run of 16 token
    # characters, would send every message holding it through the plugins again.
    runs = set()
    for schema in sorted(VENDORED_SPEC.glob("*/schema.json")):
        for name in _schema_names(json.loads(schema.read_text())):
            runs.update(re.findall(r"[A-Za-z0-9_+=-]{16,}", name))
    assert runs and runs <= PROTOCOL_WORDS


@pytest.mark.parametrize("name", list(MODERN))
def test_no_plugin_runs_on_a_modern_message_without_a_secret(name: str) -> None:
    text = MODERN[name]
    assert re.search(r"[A-Za-z0-9_+=-]{16,}", text)  # (each has a long run)
    assert len(text) > 4096 if name.startswith("long") else len(text) <= 4096
    detector = SecretDetector()
    ran: list[str] = []
    detector._patterns = [_Spy(p, ran) for p in detector._patterns]  # type: ignore[misc]
    assert candidates(text) == []
    assert detector.spans(text) == []
    assert ran == []


@pytest.mark.parametrize("secret", JSON_SECRETS, ids=lambda s: s[:12])
@pytest.mark.parametrize("name", list(MODERN))
@pytest.mark.parametrize("glued", [False, True], ids=["beside", "glued"])
def test_a_secret_beside_or_glued_to_a_protocol_word_is_found(
    secret: str, name: str, glued: bool
) -> None:
    # Glued: the word and the secret make one run, which is no word.
    text = MODERN[name]
    word = "modelcontextprotocol" if "modelcontextprotocol" in text else "additionalProperties"
    at = text.index(word) + len(word)
    if not glued:
        at += 1  # after the word's closing character ("/" or '"')
    shown = json.dumps(secret)[1:-1]
    text = text[:at] + shown + text[at:]
    spans = SecretDetector().spans(text)
    start = text.index(shown)
    assert any(a <= start + 4 and start + len(shown) - 4 <= b for a, b in spans), spans


@pytest.mark.parametrize("meta", [True, False], ids=["modern", "no-meta"])
def test_a_secret_an_escape_hides_from_the_raw_text_is_found_in_its_string(meta: bool) -> None:
    # PHP's json_encode writes "/" as "\/": the raw text holds no "://", and but for
    # the protocol's own words no run; the decoded string holds the URL's password.
    result: dict[str, object] = {"content": [{"type": "text", "text": "db: URL"}]}
    if meta:
        result["_meta"] = {"io.modelcontextprotocol/serverInfo": {"name": "s", "version": "1"}}
    url = "postgres://alice:s3cr3tpw@db.example.com/app"
    raw = json.dumps({"jsonrpc": "2.0", "id": 7, "result": result}).replace(
        "URL", url.replace("/", "\\/")
    )
    assert ":\\/\\/alice:s3cr3tpw@" in raw and "://" not in raw
    redacted = redact_message(raw, SecretDetector())
    assert redacted is not None and "s3cr3tpw" not in redacted
    text = json.loads(redacted)["result"]["content"][0]["text"]
    assert text.startswith("db: postgres://alice:<redacted") and text.endswith(
        "@db.example.com/app"
    )
