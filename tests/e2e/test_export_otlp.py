"""``--otlp URL``: the official SDK's sessions through mcpeek, their spans at a real receiver.

The receiver is an aiohttp OTLP/HTTP endpoint that decodes what it gets with
``opentelemetry-proto`` (tests/inspector/export/receiver.py). The SDK client
runs inside a caller's trace, as an agent would (``MCPEEK_TEST_TRACEPARENT``):
the SDK then puts the ``traceparent`` in each request's ``_meta``, and
mcpeek's spans must join that trace, as children of the caller's span.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from opentelemetry.proto.trace.v1.trace_pb2 import Span

from mcpeek import inspector
from tests.conftest import mcpeek_argv, peer_argv
from tests.e2e.recording import record_http
from tests.e2e.test_sdk_http import free_port, running
from tests.inspector.export.receiver import OtlpReceiver, otlp_receiver

pytestmark = pytest.mark.e2e

CALLER_TRACE = "0af7651916cd43dd8448eb211c80319c"
CALLER_SPAN = "b7ad6b7169203331"
TRACEPARENT = f"00-{CALLER_TRACE}-{CALLER_SPAN}-01"
VERSIONS = {"modern": "2026-07-28", "legacy": "2025-11-25"}
CALLS = {"tools/call add", "tools/call count", "tools/call get_weather"}
DURATIONS = {"mcp.client.operation.duration", "mcp.server.operation.duration"}


def attributes(span: Span) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for attribute in span.attributes:
        kind = attribute.value.WhichOneof("value")
        out[attribute.key] = getattr(attribute.value, kind) if kind else None
    return out


def traced_env() -> dict[str, str]:
    return {**os.environ, "MCPEEK_TEST_TRACEPARENT": TRACEPARENT}


def received_all(receiver: OtlpReceiver, names: set[str]) -> bool:
    return names <= receiver.span_names() and receiver.metric_names() >= DURATIONS


def check_calls(
    receiver: OtlpReceiver, era: str, transport: str
) -> tuple[dict[str, Span], list[Span.Event]]:
    """What both transports share: the calls' names, attributes and parents; returns
    the calls by name and the progress events of ``count``."""
    calls = {s.name: s for s in receiver.spans if s.name in CALLS}
    assert set(calls) == CALLS, receiver.span_names()
    for name, span in calls.items():
        assert span.trace_id.hex() == CALLER_TRACE, name
        assert span.parent_span_id.hex() == CALLER_SPAN, name
        assert span.kind == Span.SPAN_KIND_CLIENT
        found = attributes(span)
        assert found["mcp.method.name"] == "tools/call"
        assert found["gen_ai.tool.name"] == name.split()[-1]
        assert found["jsonrpc.request.id"].isdigit()
        assert found["mcp.protocol.version"] == VERSIONS[era]
        assert found["network.transport"] == transport
        assert span.end_time_unix_nano >= span.start_time_unix_nano
    progress = [e for e in calls["tools/call count"].events if e.name == "notifications/progress"]
    return calls, progress


@pytest.mark.parametrize("era", ["modern", "legacy"])
def test_stdio_session_spans(era: str, tmp_path: Path) -> None:
    capture = tmp_path / "cap.jsonl"
    opening = "server/discover" if era == "modern" else "initialize"
    with otlp_receiver() as receiver:
        proxy = mcpeek_argv(
            "stdio", "--otlp", receiver.url, "-w", str(capture), "--", *peer_argv("sdk_server.py")
        )
        client = subprocess.run(
            peer_argv("sdk_client.py", "--era", era, "--", *proxy),
            capture_output=True,
            text=True,
            timeout=90,
            env=traced_env(),
        )
        assert client.returncode == 0, client.stderr[-3000:]
        receiver.wait_until(lambda r: received_all(r, CALLS | {opening, "tools/list"}))
        _, progress = check_calls(receiver, era, "pipe")
        assert len(progress) == json.loads(client.stdout)["progress"] == 3
        histograms = [m for m in receiver.metrics if m.name in DURATIONS]
        methods = {
            a.value.string_value
            for m in histograms
            for p in m.histogram.data_points
            for a in p.attributes
            if a.key == "mcp.method.name"
        }
        assert {"tools/call", "tools/list", opening} <= methods
        counted = sum(p.count for m in histograms for p in m.histogram.data_points)
        # Every request of the session, measured once in each of the two histograms.
        requests = [f for f in inspector.load(capture).flows if f.request is not None]
        assert counted == 2 * len(requests)


@pytest.mark.parametrize("era", ["modern", "legacy"])
def test_http_session_spans(era: str, tmp_path: Path) -> None:
    capture = tmp_path / "http.jsonl"
    with otlp_receiver() as receiver:
        record_http(era, capture, "--otlp", receiver.url, env=traced_env())
        upstream_port = urlsplit(str(inspector.load(capture).header.target)).port
        receiver.wait_until(lambda r: received_all(r, CALLS | {"tools/call confirm"}))
        calls, progress = check_calls(receiver, era, "tcp")
        assert len(progress) == 3
        for span in calls.values():
            assert attributes(span)["server.port"] == upstream_port
        confirm = [s for s in receiver.spans if s.name == "tools/call confirm"]
        if era == "modern":
            # input_required, then the retry: one span, and a child span per attempt
            (top,) = [s for s in confirm if s.parent_span_id.hex() == CALLER_SPAN]
            attempts = [s for s in confirm if s.parent_span_id == top.span_id]
            assert len(attempts) == 2
            assert "mcp.session.id" not in attributes(top)
        else:
            session = {attributes(s).get("mcp.session.id") for s in receiver.spans}
            (session_id,) = session - {None}
            assert session_id  # the Mcp-Session-Id of the legacy session
            elicit = [s for s in receiver.spans if s.name == "elicitation/create"]
            assert len(elicit) == 1 and attributes(elicit[0])["mcpeek.sender"] == "s2c"


def test_live_violations_become_span_events(tmp_path: Path) -> None:
    """The proxy's live checks flag a misbehaving server; the follower puts each
    finding on the span of the flow it is about (without running the rules again)."""
    capture = tmp_path / "bad.jsonl"
    with otlp_receiver() as receiver:
        proxy = mcpeek_argv(
            "stdio", "--otlp", receiver.url, "-w", str(capture), "--", *peer_argv("bad_server.py")
        )
        client = subprocess.run(
            peer_argv("raw_client.py", "--", *proxy), capture_output=True, text=True, timeout=90
        )
        assert client.returncode == 0, client.stderr[-3000:]
        receiver.wait_until(lambda r: r.span_names() >= CALLS)
        found = {
            (span.name, attributes(event)["mcpeek.rule.id"])
            for span in receiver.spans
            for event in span.events
            if event.name == "mcpeek.violation"
        }
    assert {
        ("tools/call add", "tools.output-schema"),
        ("tools/call count", "progress.not-increasing"),
        ("tools/call get_weather", "result.result-type-missing"),
    } <= found


def test_an_unreachable_receiver_never_stops_the_relay(tmp_path: Path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{s.getsockname()[1]}"  # closed again: nothing listens
    upstream_port, proxy_port = free_port(), free_port()
    capture = tmp_path / "http.jsonl"
    with (
        running(peer_argv("sdk_http_server.py", "--port", str(upstream_port)), "listening on"),
        running(
            mcpeek_argv(
                "http",
                "--upstream",
                f"http://127.0.0.1:{upstream_port}/mcp",
                "--listen",
                f"127.0.0.1:{proxy_port}",
                "--otlp",
                dead,
                "-w",
                str(capture),
            ),
            "proxying",
        ) as proxy,
    ):
        client = subprocess.run(
            peer_argv(
                "sdk_http_client.py",
                "--era",
                "modern",
                "--url",
                f"http://127.0.0.1:{proxy_port}/mcp",
            ),
            capture_output=True,
            text=True,
            timeout=90,
        )
        assert client.returncode == 0, client.stderr[-3000:]
        proxy.send_signal(signal.SIGINT)
        assert proxy.stderr is not None
        said = proxy.stderr.read()
        assert proxy.wait(timeout=30) == 0
    assert json.loads(client.stdout)["add"] == 5
    failing = [line for line in said.splitlines() if "OTLP export" in line]
    assert len(failing) == 1, said
    assert failing[0].startswith(f"mcpeek: OTLP export to {dead} is failing (")
    assert "Traceback" not in said
    calls = [f for f in inspector.load(capture).flows if f.method == "tools/call"]
    assert len(calls) == 4 and all(f.status == "complete" for f in calls)


def test_otlp_needs_a_good_url(tmp_path: Path) -> None:
    done = subprocess.run(
        mcpeek_argv("stdio", "--otlp", "ftp://x", "-w", str(tmp_path / "c.jsonl"), "--", "true"),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert done.stderr.startswith("mcpeek: --otlp: bad OTLP endpoint 'ftp://x'")
    assert not (tmp_path / "c.jsonl").exists()  # refused before anything started


def test_a_server_that_never_starts(tmp_path: Path) -> None:
    """The proxy discards the capture; the exporter has nothing to say about it."""
    with otlp_receiver() as receiver:
        done = subprocess.run(
            mcpeek_argv(
                "stdio",
                "--otlp",
                receiver.url,
                "-w",
                str(tmp_path / "c.jsonl"),
                "--",
                str(tmp_path / "no-such-server"),
            ),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert done.returncode == 2
    assert "cannot start the server" in done.stderr
    assert "OTLP" not in done.stderr and "Traceback" not in done.stderr
    assert receiver.spans == []


def old_session(capture: Path) -> None:
    """A capture already at ``capture``, from a session whose flows the tests below
    must never see exported: a stdio session of the bad server (its own tool names)."""
    proxy = mcpeek_argv("stdio", "-w", str(capture), "--", *peer_argv("bad_server.py"))
    client = subprocess.run(
        peer_argv("raw_client.py", "--", *proxy), capture_output=True, text=True, timeout=90
    )
    assert client.returncode == 0, client.stderr[-3000:]
    assert len(inspector.load(capture).flows) > 3


def replacing(capture: Path, url: str, *server: str) -> list[str]:
    """``mcpeek stdio`` exporting to ``url``, its capture replacing ``capture``."""
    return mcpeek_argv("stdio", "--otlp", url, "-w", str(capture), "--force", "--", *server)


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_force_exports_the_new_session_not_the_one_it_replaces(
    transport: str, tmp_path: Path
) -> None:
    """With ``-w FILE --force``, the new capture takes FILE's name once the run has
    started; until then FILE holds the old capture, which the follower must not export."""
    capture = tmp_path / "cap.jsonl"
    old_session(capture)
    started = time.time_ns()
    with otlp_receiver() as receiver:
        if transport == "stdio":
            proxy = replacing(capture, receiver.url, *peer_argv("sdk_server.py"))
            client = subprocess.run(
                peer_argv("sdk_client.py", "--era", "modern", "--", *proxy),
                capture_output=True,
                text=True,
                timeout=90,
            )
            assert client.returncode == 0, client.stderr[-3000:]
        else:
            record_http("modern", capture, "--otlp", receiver.url, "--force")
        # The proxy has exited, and waited for its follower to send the rest.
        receiver.wait_until(lambda r: r.span_names() >= CALLS)
    old = [s.name for s in receiver.spans if s.start_time_unix_nano < started]
    assert old == [], old
    new = [f for f in inspector.load(capture).flows if f.request is not None]
    assert len(receiver.spans) >= len(new)


def test_force_over_a_capture_when_the_server_never_starts(tmp_path: Path) -> None:
    """The old capture stays, the new one is discarded: nothing is exported, the old
    capture's flows least of all."""
    capture = tmp_path / "c.jsonl"
    old_session(capture)
    kept = capture.read_bytes()
    with otlp_receiver() as receiver:
        done = subprocess.run(
            replacing(capture, receiver.url, str(tmp_path / "no-such-server")),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert done.returncode == 2, done.stderr
    assert capture.read_bytes() == kept
    assert receiver.spans == [], receiver.span_names()
