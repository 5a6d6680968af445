"""``mcpeek mcp``: the official SDK's client calls every tool, on stdio and HTTP, both eras.

The answers must be what ``show --format json`` and ``lint --format json``
print for the same captures (the bundled ones, one with a redacted
credential, and one a proxy is still writing); wrong arguments must be MCP
errors after which the server still answers; ``replay_flow`` must run only
the server a capture recorded unless ``--allow-run``; and the server's own
traffic, recorded through ``mcpeek stdio``, must lint clean.
"""

from __future__ import annotations

import http.client
import json
import re
import signal
import socket
import subprocess
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from urllib.parse import urlsplit

import anyio
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from mcpeek import inspector
from mcpeek.inspector.testing.records import RecordBuilder
from tests.conftest import mcpeek_argv, peer_argv
from tests.e2e.assist_client import (
    TOOLS,
    cli_json,
    connected,
    matches_the_cli,
    refused,
    structured,
)
from tests.e2e.test_sdk_http import free_port, running

pytestmark = pytest.mark.e2e

CAPTURES = Path(__file__).parents[2] / "captures"
BUNDLED = sorted(CAPTURES.glob("*.jsonl"))
BAD_BY_SCHEMA = 3  # wrong calls of every_tool() that its input schemas already refuse
SECRET_NAME = "with secret 100%.jsonl"
SECRET_URI = "mcpeek://captures/with%20secret%20100%25.jsonl"
SECRET = "Bearer sk-live-never-shown-0123456789abcdef"


def redacted_capture(tmp_path: Path) -> Path:
    """An HTTP capture whose request carried a credential, recorded (so redacted)."""
    b = RecordBuilder("http", modern=True)
    b.http("x1", "request", method="POST", path="/mcp", headers=[("authorization", SECRET)])
    b.http("x1", "response", status=200, headers=[("content-type", "application/json")])
    b.request("tools/list", {}, id=1).ch = "x1"
    b.result(1, {"tools": []}).ch = "x1"
    b.http("x1", "end")
    path = b.save(tmp_path / SECRET_NAME)
    assert SECRET not in path.read_text()
    return path


def mcp_argv(tmp_path: Path, *extra: str) -> list[str]:
    files = [*BUNDLED, redacted_capture(tmp_path)]
    home = tmp_path / "home"
    return mcpeek_argv(
        "mcp", "--home", str(home), *[a for f in files for a in ("--capture", str(f))], *extra
    )


async def every_tool(client: Client) -> None:
    """What an assistant does: every tool, resource and the prompt, and wrong arguments."""
    assert {t.name for t in (await client.list_tools()).tools} == TOOLS
    for tool in (await client.list_tools()).tools:
        assert tool.input_schema["type"] == "object" and tool.output_schema is not None
    listed = (await structured(client, "list_captures"))["captures"]
    assert {c["name"] for c in listed} == {p.name for p in BUNDLED} | {SECRET_NAME}
    assert not any(c["live"] for c in listed)
    for path in BUNDLED:
        await matches_the_cli(client, path)
    a, b = (str(p.resolve()) for p in BUNDLED[:2])
    (printed,) = cli_json("diff", "--format", "json", a, b)
    assert await structured(client, "diff_captures", a=a, b=b) == printed
    flagged = await structured(client, "list_flows", capture="violations.jsonl", filter="~v")
    assert flagged["flows"] and all(r["violations"] for r in flagged["flows"])

    secret = await structured(client, "get_flow", capture=SECRET_NAME, flow=1)
    headers = dict(secret["messages"][0]["http"]["request_headers"])
    assert headers["authorization"].startswith("<redacted")
    assert "sk-live" not in json.dumps(secret)

    assert "--allow-run" in await refused(
        client, "replay_flow", capture="violations.jsonl", flow=1, command=["sh", "-c", "id"]
    )
    for tool, arguments, words in [
        ("list_flows", {"capture": "nope.jsonl"}, "no capture"),
        ("list_flows", {"capture": "violations.jsonl", "filter": "~x"}, "unknown operator"),
        ("get_flow", {"capture": "violations.jsonl", "flow": 999}, "no flow 999"),
        ("get_flow", {"capture": "violations.jsonl", "flow": "two"}, "flow"),
        ("get_flow", {"capture": "violations.jsonl"}, "flow"),
        ("lint", {"capture": "violations.jsonl", "min_severity": "fatal"}, "min_severity"),
        ("explain_rule", {"rule_id": "no.such-rule"}, "no rule"),
        ("diff_captures", {"a": "violations.jsonl", "b": "nope.jsonl"}, "no capture"),
        ("no_such_tool", {}, "no_such_tool"),
    ]:
        assert words in await refused(client, tool, **arguments), (tool, arguments)
    # ... and the server still answers
    assert (await structured(client, "explain_rule", rule_id=listed_rule()))["known"] is True

    resources = {str(r.uri) for r in (await client.list_resources()).resources}
    assert {"mcpeek://captures", "mcpeek://captures/violations.jsonl"} <= resources
    assert SECRET_URI in resources  # a name that is no URI as it is, quoted
    quoted = await client.read_resource(SECRET_URI)
    assert json.loads(quoted.contents[0].text)["name"] == SECRET_NAME  # type: ignore[union-attr]
    templates = (await client.list_resource_templates()).resource_templates
    assert [t.uri_template for t in templates] == ["mcpeek://captures/{name}"]
    read = await client.read_resource("mcpeek://captures/violations.jsonl")
    body = json.loads(read.contents[0].text)  # type: ignore[union-attr]
    assert body["name"] == "violations.jsonl" and body["violations"]["error"] >= 1
    flow = flagged["flows"][0]
    prompt = await client.get_prompt(
        "why_did_this_call_fail", {"capture": "violations.jsonl", "flow": str(flow["flow"])}
    )
    text = prompt.messages[0].content.text  # type: ignore[union-attr]
    assert "Why did this MCP call fail?" in text
    assert re.search(r"https://modelcontextprotocol\.io/specification/\S+", text)
    for uri, arguments in [
        ("mcpeek://captures/nope.jsonl", None),
        (None, {"capture": "violations.jsonl", "flow": "two"}),
        (None, {"capture": "nope.jsonl", "flow": "1"}),
    ]:
        with pytest.raises(MCPError):
            if uri is not None:
                await client.read_resource(uri)
            else:
                await client.get_prompt("why_did_this_call_fail", arguments)
    assert (await structured(client, "list_captures"))["captures"]  # still there


def listed_rule() -> str:
    return cli_json("rules", "--format", "json")[0]["id"]  # type: ignore[return-value]


@pytest.mark.parametrize("era", ["modern", "legacy"])
def test_every_tool_over_stdio_and_its_own_traffic_lints_clean(era: str, tmp_path: Path) -> None:
    own = tmp_path / "own.jsonl"
    server = mcpeek_argv("stdio", "-w", str(own), "--", *mcp_argv(tmp_path))

    async def session() -> None:
        async with connected(server, era) as client:
            await every_tool(client)

    anyio.run(session)
    recorded = inspector.load(own)
    assert [c.era for c in recorded.conversations] == [era]
    assert len(recorded.flows) > 40
    assert_only_the_deliberate_findings(own)


def assert_only_the_deliberate_findings(own: Path) -> None:
    """The only findings in the recorded traffic are the client's calls with arguments
    outside the tools' input schemas, sent on purpose by every_tool() and answered with
    errors: none is the server's."""
    found = cli_json("lint", "--format", "json", str(own))
    blamed = [v for v in found if v["rule"] != "tools.input-schema"]
    assert blamed == [], "\n".join(f"{v['rule']}: {v['message']}" for v in blamed)
    assert [v["severity"] for v in found] == ["info"] * BAD_BY_SCHEMA


@contextmanager
def serving_http(argv: list[str], said: list[str] | None = None) -> Iterator[str]:
    """``mcpeek mcp --http`` running; yields the URL its ready line names (``said``
    gets the lines it printed on stderr after that one)."""
    process = subprocess.Popen(argv, stderr=subprocess.PIPE, text=True)
    assert process.stderr is not None
    try:
        line = process.stderr.readline()
        found = re.fullmatch(r"mcpeek: mcp server on (http://127\.0\.0\.1:\d+/mcp)\n", line)
        assert found, line
        yield found.group(1)
    finally:
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=20) == 0
        rest = process.stderr.read()
        assert "Traceback" not in rest
        if said is not None:
            said += rest.splitlines()


@pytest.mark.parametrize("era", ["modern", "legacy"])
def test_every_tool_over_streamable_http_and_its_own_traffic_lints_clean(
    era: str, tmp_path: Path
) -> None:
    own = tmp_path / "own.jsonl"
    port = free_port()
    with serving_http(mcp_argv(tmp_path, "--http", "127.0.0.1:0")) as url:
        proxy_argv = mcpeek_argv(
            "http", "--upstream", url, "--listen", f"127.0.0.1:{port}", "-w", str(own)
        )
        with running(proxy_argv, "proxying") as proxy:

            async def session() -> None:
                async with connected(f"http://127.0.0.1:{port}/mcp", era) as client:
                    await every_tool(client)

            anyio.run(session)
            proxy.send_signal(signal.SIGINT)
            assert proxy.wait(timeout=30) == 0
    recorded = inspector.load(own)
    assert [c.era for c in recorded.conversations] == [era]
    assert_only_the_deliberate_findings(own)


def test_http_refuses_a_page_from_elsewhere(tmp_path: Path) -> None:
    """DNS rebinding: a request whose Host or Origin is not a loopback one is refused,
    and the SDK's warning about it is one mcpeek: line (not its multi-line Rich log)."""
    said: list[str] = []
    with serving_http(mcp_argv(tmp_path, "--http", "127.0.0.1:0"), said) as url:
        where = urlsplit(url)
        body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "page", "version": "1"},
        }})  # fmt: skip
        statuses = []
        for headers in ({}, {"Host": "evil.example"}, {"Origin": "http://evil.example"}):
            connection = http.client.HTTPConnection(where.hostname, where.port, timeout=30)
            try:
                connection.request(
                    "POST",
                    where.path,
                    body,
                    {
                        "Content-Type": "application/json",
                        "Accept": "application/json, text/event-stream",
                        **headers,
                    },
                )
                statuses.append(connection.getresponse().status)
            finally:
                connection.close()
        ordinary, bad_host, bad_origin = statuses
        assert ordinary == 200  # the same request from the loopback page is answered
        assert bad_host in (403, 421) and bad_origin in (403, 421)
    assert said and all(line.startswith("mcpeek: ") for line in said), said
    assert any(line.endswith("Invalid Host header: evil.example") for line in said), said


def test_http_listens_on_loopback_only(tmp_path: Path) -> None:
    done = subprocess.run(
        mcpeek_argv("mcp", "--http", "0.0.0.0:0"), capture_output=True, text=True, timeout=30
    )
    assert done.returncode == 2
    assert done.stderr.strip() == "mcpeek: --http 0.0.0.0:0: mcpeek mcp listens on loopback only"
    done = subprocess.run(
        mcpeek_argv("mcp", "--capture", str(tmp_path / "none.jsonl")),
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.returncode == 2 and done.stderr.startswith("mcpeek: --capture")
    assert "Traceback" not in done.stderr
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = subprocess.run(
            mcpeek_argv("mcp", "--http", f"127.0.0.1:{port}"),
            capture_output=True,
            text=True,
            timeout=30,
        )
    assert done.returncode == 2
    assert done.stderr.startswith(f"mcpeek: --http 127.0.0.1:{port}: cannot listen: ")
    assert len(done.stderr.splitlines()) == 1


@asynccontextmanager
async def assistant(tmp_path: Path, transport: str, era: str, *extra: str) -> AsyncIterator[Client]:
    """A client of ``mcpeek mcp ARGS`` over ``transport`` (stdio, or HTTP on a loopback port)."""
    if transport == "stdio":
        async with connected(mcp_argv(tmp_path, *extra), era) as client:
            yield client
        return
    with serving_http(mcp_argv(tmp_path, "--http", "127.0.0.1:0", *extra)) as url:
        async with connected(url, era) as client:
            yield client


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_a_capture_being_written(transport: str, tmp_path: Path) -> None:
    live = tmp_path / "live.jsonl"
    proxied = mcpeek_argv("stdio", "-w", str(live), "--", *peer_argv("sdk_server.py"))

    async def session() -> None:
        async with connected(proxied, "modern") as recorded:
            await recorded.call_tool("add", {"a": 2, "b": 3})
            await recorded.call_tool("get_weather", {"city": "Paris"})
            async with assistant(tmp_path, transport, "legacy", "--capture", str(live)) as client:
                listed = (await structured(client, "list_captures"))["captures"]
                (entry,) = [c for c in listed if c["name"] == "live.jsonl"]
                assert entry["live"] is True and entry["era"] == "modern"
                before = await matches_the_cli(client, live)  # what show/lint say right now
                names = [r["name"] for r in before["flows"] if r["method"] == "tools/call"]
                assert names == ["add", "get_weather"]
                steps: list[float] = []

                async def on_progress(done: float, total: float | None, text: str | None) -> None:
                    steps.append(done)

                await recorded.call_tool("count", {"n": 2}, progress_callback=on_progress)
                assert len(steps) == 2
                after = await matches_the_cli(client, live)
                assert after["total"] > before["total"]
                grown = [r for r in after["flows"] if r["name"] == "count"]
                assert len(grown) == 1 and grown[0]["progress"] == 2
        # the proxy is gone: the capture is no longer live
        async with assistant(tmp_path, "stdio", "modern", "--capture", str(live)) as client:
            listed = (await structured(client, "list_captures"))["captures"]
            assert next(c for c in listed if c["name"] == "live.jsonl")["live"] is False

    anyio.run(session)


def test_replay_flow_runs_only_the_recorded_server(tmp_path: Path) -> None:
    recording = tmp_path / "recorded.jsonl"
    proxied = mcpeek_argv("stdio", "-w", str(recording), "--", *peer_argv("sdk_server.py"))
    done = subprocess.run(
        peer_argv("sdk_client.py", "--era", "legacy", "--", *proxied),
        capture_output=True,
        timeout=90,
    )
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    flows = inspector.load(recording).flows
    weather = next(f.number for f in flows if f.name == "get_weather")
    changed = peer_argv("sdk_server_changed.py")  # answers "Rainy in ..." instead of "Sunny"

    async def session() -> None:
        capture = str(recording)
        async with assistant(tmp_path, "stdio", "modern", "--capture", capture) as client:
            same = await structured(client, "replay_flow", capture=capture, flow=weather)
            assert same["server"] == peer_argv("sdk_server.py") and same["transport"] == "stdio"
            assert same["report"]["flow"] == weather and same["report"]["same"] is True
            refusal = await refused(
                client, "replay_flow", capture=capture, flow=weather, command=changed
            )
            assert "--allow-run" in refusal
            opening = next(f.number for f in flows if f.method == "notifications/initialized")
            assert "is not a client request" in await refused(
                client, "replay_flow", capture=capture, flow=opening
            )
        async with assistant(
            tmp_path, "stdio", "legacy", "--allow-run", "--capture", capture
        ) as client:
            differs = await structured(
                client, "replay_flow", capture=capture, flow=weather, command=changed
            )
            assert differs["report"]["same"] is False
            paths = {d["path"] for d in differs["report"]["differences"]}
            assert "/result/content/0/text" in paths

    anyio.run(session)


def test_replay_flow_over_http_runs_only_the_recorded_url(tmp_path: Path) -> None:
    recording = tmp_path / "http.jsonl"
    upstream_port, proxy_port = free_port(), free_port()
    upstream = f"http://127.0.0.1:{upstream_port}/mcp"
    with running(peer_argv("sdk_http_server.py", "--port", str(upstream_port)), "listening on"):
        proxy_argv = mcpeek_argv(
            "http", "--upstream", upstream, "--listen", f"127.0.0.1:{proxy_port}",
            "-w", str(recording),
        )  # fmt: skip
        with running(proxy_argv, "proxying") as proxy:
            client = subprocess.run(
                peer_argv(
                    "sdk_http_client.py", "--era", "modern", "--skip-confirm",
                    "--url", f"http://127.0.0.1:{proxy_port}/mcp",
                ),
                capture_output=True,
                text=True,
                timeout=90,
            )  # fmt: skip
            assert client.returncode == 0, client.stderr[-2000:]
            proxy.send_signal(signal.SIGINT)
            assert proxy.wait(timeout=30) == 0
        added = next(f.number for f in inspector.load(recording).flows if f.name == "add")

        async def session() -> None:
            capture = str(recording)
            async with assistant(tmp_path, "stdio", "legacy", "--capture", capture) as client:
                same = await structured(client, "replay_flow", capture=capture, flow=added)
                assert (same["transport"], same["server"]) == ("http", upstream)
                assert same["report"]["same"] is True, same["report"]
                elsewhere = f"http://127.0.0.1:{proxy_port}/mcp"
                assert "--allow-run" in await refused(
                    client, "replay_flow", capture=capture, flow=added, url=elsewhere
                )

        anyio.run(session)
