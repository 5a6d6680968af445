"""Secrets sent through the live proxies reach the peer unchanged and the capture never.

On stdio (``mcpeek stdio`` around a byte-exact peer) and on HTTP (the relay in
front of a loopback upstream), a conversation carrying credentials of every
kind is relayed; the capture must hold none of them, each message must still
be valid JSON, ``lint`` must find exactly what it finds in a ``--no-redact``
capture of the same traffic, and ``serve`` must still answer the client.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import aiohttp
import msgspec
import pytest
from aiohttp import web

from mcpeek.inspector.capture import CaptureWriter, read_records
from mcpeek.inspector.proxy.guard import RequestGuard
from mcpeek.inspector.proxy.http import HttpRelay
from mcpeek.inspector.records import Http, Msg, wire_bytes
from tests.conftest import mcpeek_argv, peer_argv
from tests.e2e.test_sdk_http import free_port, running
from tests.inspector.capture.test_redact import (
    AWS_KEY,
    GITHUB_TOKEN,
    JWT,
    PRIVATE_KEY,
    SLACK_TOKEN,
    STRIPE_KEY,
)
from tests.inspector.proxy.http_harness import listen

pytestmark = pytest.mark.e2e

PASSWORD = "correct horse battery staple"
API_KEY = "k-live-0123456789"
SECRETS = [AWS_KEY, GITHUB_TOKEN, JWT, SLACK_TOKEN, STRIPE_KEY, PRIVATE_KEY, PASSWORD, API_KEY]
VERSION = "2025-11-25"

CLIENT = [
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": VERSION,
            "capabilities": {},
            "clientInfo": {"name": "c", "version": "1"},
        },
    },
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
    {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "tools/call",
        "params": {
            "name": "deploy",
            "arguments": {
                "target": {"host": "db.internal", "password": PASSWORD, "api_key": API_KEY},
                "note": f"use {GITHUB_TOKEN} then {SLACK_TOKEN}",
            },
        },
    },
]
SERVER = [
    {
        "jsonrpc": "2.0",
        "id": 1,
        "result": {
            "protocolVersion": VERSION,
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "s", "version": "1"},
        },
    },
    {
        "jsonrpc": "2.0",
        "id": 2,
        "result": {
            "content": [
                {"type": "text", "text": f"found {AWS_KEY} and {STRIPE_KEY}, session {JWT}"},
                {"type": "text", "text": PRIVATE_KEY},
            ],
            "isError": False,
        },
    },
]


def jsonl(messages: list[dict[str, Any]]) -> bytes:
    return b"".join(json.dumps(m).encode() + b"\n" for m in messages)


def assert_clean(capture: Path) -> None:
    """No secret in the file's bytes (as they would be written in JSON either way),
    and every message record still a JSON value."""
    data = capture.read_bytes()
    for secret in SECRETS:
        for form in {secret, json.dumps(secret)[1:-1], json.dumps(json.dumps(secret)[1:-1])[1:-1]}:
            assert form.encode() not in data, secret
    _, records, problems = read_records(capture)
    assert problems == []
    messages = [r for r in records if isinstance(r, Msg)]
    assert messages
    for record in messages:
        msgspec.json.decode(wire_bytes(record))


def lint(capture: Path) -> set[tuple[str, tuple[int, ...]]]:
    proc = subprocess.run(
        mcpeek_argv("lint", "--format", "json", str(capture)), capture_output=True, text=True
    )
    assert proc.returncode in (0, 1), proc.stderr
    found = [json.loads(line) for line in proc.stdout.splitlines()]
    return {(v["rule"], tuple(v["msgs"])) for v in found}


def test_stdio(tmp_path: Path) -> None:
    server_file = tmp_path / "server.jsonl"
    server_file.write_bytes(jsonl(SERVER))
    client = jsonl(CLIENT)
    captures = {}
    for mode, options in (("redacted", []), ("kept", ["--no-redact"])):
        capture = captures[mode] = tmp_path / f"{mode}.jsonl"
        received = tmp_path / f"{mode}-received.bin"
        server = peer_argv("byte_server.py", "--send", str(server_file), "--recv-to", str(received))
        argv = mcpeek_argv("stdio", "-q", "--no-check", "-w", str(capture), *options, "--", *server)
        proc = subprocess.run(argv, input=client, capture_output=True, timeout=60)
        assert proc.returncode == 0, proc.stderr
        # The peers get every byte as sent: redaction is for the recorded copy only.
        assert proc.stdout == server_file.read_bytes()
        assert received.read_bytes() == client
    assert_clean(captures["redacted"])
    assert PASSWORD.encode() in captures["kept"].read_bytes()
    assert lint(captures["redacted"]) == lint(captures["kept"])
    # The mock answers the real client, secrets and all, from the redacted capture.
    proc = subprocess.run(
        mcpeek_argv("serve", str(captures["redacted"])), input=client, capture_output=True
    )
    assert proc.returncode == 0, proc.stderr
    answers = {m["id"]: m for m in map(json.loads, proc.stdout.splitlines())}
    assert "result" in answers[2], answers
    assert answers[2]["result"]["content"][0]["text"].startswith("found <redacted sha256:")


async def test_http(aiohttp_server, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """The relay in front of an upstream that is an MCP server and its own OAuth
    authorization server, as mcpeek sees when both sit behind one origin."""
    seen: list[tuple[str, dict[str, str], bytes]] = []

    async def upstream(request: web.Request) -> web.StreamResponse:
        body = await request.read()
        seen.append((request.path_qs, dict(request.headers), body))
        if request.path == "/token":
            token = {"access_token": JWT, "refresh_token": "r-" + API_KEY, "token_type": "Bearer"}
            return web.json_response(token)
        message = json.loads(body)
        answer = next((m for m in SERVER if m.get("id") == message.get("id")), None)
        if answer is None:
            return web.Response(status=202)
        return web.json_response(answer)

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", upstream)
    server = await aiohttp_server(app)
    captures = {}
    for mode, redact in (("redacted", True), ("kept", False)):
        capture = captures[mode] = tmp_path / f"{mode}.jsonl"
        target = str(server.make_url("/mcp"))
        with CaptureWriter(capture, transport="http", target=target, redact=redact) as writer:

            def emit(records: Any, writer: CaptureWriter = writer) -> None:
                writer.write_many(records)

            guard = RequestGuard(0)
            async with HttpRelay(target, emit, guard) as relay:
                runner, guard.port = await listen(relay)
                try:
                    await talk(f"http://127.0.0.1:{guard.port}")
                finally:
                    await runner.cleanup()
    secret_headers = {"Authorization": f"Bearer {JWT}", "X-Goog-Api-Key": API_KEY}
    # The upstream got everything as sent.
    assert any(f"api_key={API_KEY}" in path for path, _, _ in seen)
    assert any(h.get("X-Goog-Api-Key") == secret_headers["X-Goog-Api-Key"] for _, h, _ in seen)
    assert any(PASSWORD.encode() in body for _, _, body in seen)
    assert_clean(captures["redacted"])
    assert API_KEY.encode() in captures["kept"].read_bytes()
    assert lint(captures["redacted"]) == lint(captures["kept"])
    _, records, _ = read_records(captures["redacted"])
    paths = [r.path for r in records if isinstance(r, Http) and r.phase == "request"]
    assert "/mcp?api_key=<redacted sha256:" in "".join(p or "" for p in paths)
    # The mock made of the redacted capture answers the real client over HTTP.
    port = free_port()
    argv = mcpeek_argv("serve", "--listen", f"127.0.0.1:{port}", str(captures["redacted"]))
    with running(argv, "serving"):
        answers = await talk(f"http://127.0.0.1:{port}", token=False)
    assert answers[-1]["result"]["content"][0]["text"].startswith("found <redacted sha256:")


async def talk(base: str, *, token: bool = True) -> list[dict[str, Any]]:
    """The client's side: an OAuth token request (``token``), then the MCP
    conversation; the JSON answers it got."""
    answers = []
    headers = {
        "Authorization": f"Bearer {JWT}",
        "X-Goog-Api-Key": API_KEY,
        "Accept": "application/json, text/event-stream",
    }
    async with aiohttp.ClientSession() as session:
        form = {
            "grant_type": "authorization_code",
            "code": "auth-code-" + API_KEY,
            "code_verifier": "verifier-" + PASSWORD.replace(" ", "-"),
            "client_secret": STRIPE_KEY,
        }
        if token:
            async with session.post(f"{base}/token", data=form) as response:
                assert (await response.json())["access_token"] == JWT
        for message in CLIENT:
            async with session.post(
                f"{base}/mcp?api_key={API_KEY}", json=message, headers=headers
            ) as response:
                if response.content_type == "application/json":
                    answers.append(await response.json())
                if "mcp-session-id" in response.headers:
                    headers["Mcp-Session-Id"] = response.headers["mcp-session-id"]
    return answers
