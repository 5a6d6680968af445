"""The scripted client: its conversation, played straight against the demo server."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from mcpeek.inspector.demo.client import (
    DemoClient,
    DemoError,
    answer_input_requests,
    converse,
    play,
    proxy_command,
)
from mcpeek.inspector.demo.server import MCP, NOTE_URI, confirm_request

SERVER = [sys.executable, "-m", "mcpeek.inspector.demo.server", "--delay", "0"]


def test_the_conversation_against_the_server_alone() -> None:
    client = DemoClient(SERVER, delay=0.0)
    play(client)  # raises if any step failed
    methods = [m["method"] for m in client.notifications]
    assert methods == [
        "notifications/subscriptions/acknowledged",
        "notifications/progress",
        "notifications/progress",
        "notifications/progress",
        "notifications/resources/updated",
        "notifications/progress",  # the search's, before it is cancelled
    ]
    updated = client.notifications[4]["params"]
    assert updated == {"_meta": {MCP + "subscriptionId": 4}, "uri": NOTE_URI}
    assert "demo-server: ready" in client.stderr_lines
    assert any("cancelled by the client" in line for line in client.stderr_lines)


def test_a_server_that_dies_is_a_demo_error() -> None:
    client = DemoClient([sys.executable, "-c", "import sys; print('boom', file=sys.stderr)"])
    client.start()
    with pytest.raises(DemoError, match=r"stdout ended.*boom"):
        converse(client)
    client.close()


def test_a_command_that_cannot_start_is_a_demo_error(tmp_path: Path) -> None:
    with pytest.raises(DemoError, match="cannot start"):
        play(DemoClient([str(tmp_path / "missing")]))


def test_the_user_accepts_every_confirmation() -> None:
    answers = answer_input_requests({"confirm": confirm_request("staging")})
    assert answers == {"confirm": {"action": "accept", "content": {"confirm": True}}}
    with pytest.raises(DemoError, match="unexpected input request"):
        answer_input_requests({"x": {"method": "roots/list"}})


def test_proxy_command_is_mcpeek_stdio_in_front_of_the_server(tmp_path: Path) -> None:
    command: list[Any] = proxy_command(tmp_path / "c.jsonl", python="py", delay=0.25)
    assert command == [
        "py", "-I", "-m", "mcpeek", "stdio", "-q", "-w", str(tmp_path / "c.jsonl"), "--",
        "py", "-I", "-m", "mcpeek.inspector.demo.server", "--delay", "0.25",
    ]  # fmt: skip


def test_closing_the_viewer_after_the_conversation_is_not_an_abort() -> None:
    # The viewer can be closed while play() is still in close(), waiting for
    # mcpeek to exit: the demo ran to its end all the same.
    client = DemoClient(SERVER, delay=0.0)
    play(client)
    client.abort()
    assert not client.aborted


def test_closing_the_viewer_during_the_conversation_is_an_abort() -> None:
    client = DemoClient(SERVER, delay=5.0)
    client.start()
    client.abort()
    with pytest.raises(DemoError, match="stopped"):
        converse(client)
    client.close()
    assert client.aborted


def test_a_server_gone_before_the_first_write_is_reported_with_its_last_words() -> None:
    # The other order of the race above: the first write meets a closed stdin (EPIPE)
    # before the reader has seen the stdout's end; the error still says what it said.
    client = DemoClient([sys.executable, "-c", "import sys; print('boom', file=sys.stderr)"])
    client.start()
    assert client._proc is not None
    client._proc.wait()  # (gone for sure: no timing)
    with pytest.raises(DemoError, match=r"stdout ended.*boom"):
        for _ in range(3):  # a pipe may take the first write before it breaks
            client.notify("notifications/initialized", {})
