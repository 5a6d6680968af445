"""``replay_flow``'s guard: only the recorded server runs unless --allow-run."""

from __future__ import annotations

import pytest

from mcpeek.inspector.assist.desk import AssistError
from mcpeek.inspector.assist.rerun import guarded_target
from mcpeek.inspector.records import Header

STDIO = Header(transport="stdio", target=["python", "server.py"])
HTTP = Header(transport="http", target="http://127.0.0.1:8000/mcp")


def test_the_recorded_server_runs_by_default() -> None:
    stdio = guarded_target(STDIO, None, None, allow_run=False)
    assert (stdio.transport, stdio.name) == ("stdio", ["python", "server.py"])
    http = guarded_target(HTTP, None, None, allow_run=False)
    assert (http.transport, http.name) == ("http", HTTP.target)
    # naming the recorded server itself needs no permission
    assert guarded_target(STDIO, ["python", "server.py"], None, allow_run=False).name == [
        "python",
        "server.py",
    ]
    assert guarded_target(HTTP, None, str(HTTP.target), allow_run=False).name == HTTP.target


@pytest.mark.parametrize(
    ("header", "command", "url"),
    [
        (STDIO, ["sh", "-c", "rm -rf ~"], None),
        (STDIO, ["python", "server.py", "--extra"], None),
        (STDIO, None, "http://127.0.0.1:8000/mcp"),
        (HTTP, None, "http://127.0.0.1:9999/mcp"),
        (HTTP, ["python", "server.py"], None),
    ],
)
def test_anything_else_is_refused_without_allow_run(
    header: Header, command: list[str] | None, url: str | None
) -> None:
    with pytest.raises(AssistError, match="--allow-run"):
        guarded_target(header, command, url, allow_run=False)
    allowed = guarded_target(header, command, url, allow_run=True)
    assert allowed.name == (command or url)
    assert allowed.transport == ("stdio" if command else "http")


def test_both_or_no_recorded_server() -> None:
    with pytest.raises(AssistError, match="not both"):
        guarded_target(STDIO, ["x"], "http://127.0.0.1:1/", allow_run=True)
    with pytest.raises(AssistError, match="recorded no server"):
        guarded_target(Header(transport="stdio", target=""), None, None, allow_run=False)


@pytest.mark.parametrize(
    "header",
    [
        Header(transport="stdio", target=["srv", "--token=<redacted sha256:0123abcd>"]),
        Header(transport="http", target="http://h/mcp?api_key=<redacted sha256:0123abcd>"),
        Header(transport="http", target="http://alice:<redacted>@h/mcp"),
    ],
)
def test_a_recorded_server_with_redacted_credentials_is_not_run(header: Header) -> None:
    """Run as recorded, it would get a marker for its token: the user gives it whole."""
    with pytest.raises(AssistError, match="redacted credentials"):
        guarded_target(header, None, None, allow_run=False)
    command = ["srv", "--token=t"] if header.transport == "stdio" else None
    url = None if command else "http://h/mcp?api_key=k"
    assert guarded_target(header, command, url, allow_run=True).name == (command or url)
