"""The demo server's handlers, driven in-process (no pipes, no pauses)."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import jsonschema
import pytest

from mcpeek.inspector.demo.server import (
    MCP,
    NOTE_URI,
    SERVER_INFO,
    TOOLS,
    VERSION,
    DemoServer,
)

META = {
    MCP + "protocolVersion": VERSION,
    MCP + "clientInfo": {"name": "test", "version": "0"},
    MCP + "clientCapabilities": {"elicitation": {"form": {}}},
}


class Harness:
    def __init__(self) -> None:
        self.out: list[dict[str, Any]] = []
        self.logs: list[str] = []
        self.server = DemoServer(self.out.append, delay=0.0, log=self.logs.append, secret=b"k")

    def request(
        self, id_: Any, method: str, meta: dict[str, Any] | None = None, **params: Any
    ) -> list[dict[str, Any]]:
        """Send one request; what the server sent in reply (its calls finished)."""
        start = len(self.out)
        body = {**params, "_meta": META if meta is None else meta}
        self.server.handle({"jsonrpc": "2.0", "id": id_, "method": method, "params": body})
        self.server.join(5.0)
        return self.out[start:]

    def call(self, id_: Any, name: str, meta: dict[str, Any] | None = None, **params: Any) -> Any:
        sent = self.request(id_, "tools/call", meta, name=name, **params)
        return answer(sent, id_)["result"]

    def notify(self, method: str, params: dict[str, Any]) -> None:
        self.server.handle({"jsonrpc": "2.0", "method": method, "params": params})


def answer(sent: list[dict[str, Any]], id_: Any) -> dict[str, Any]:
    answers = [m for m in sent if "method" not in m]
    assert len(answers) == 1, sent
    assert answers[0]["id"] == id_
    return answers[0]


def tool(name: str) -> dict[str, Any]:
    return next(t for t in TOOLS if t["name"] == name)


@pytest.fixture
def h() -> Harness:
    return Harness()


def test_discover_declares_the_modern_version_and_capabilities(h: Harness) -> None:
    result = answer(h.request(1, "server/discover"), 1)["result"]
    assert result["resultType"] == "complete"
    assert result["supportedVersions"] == [VERSION]
    assert set(result["capabilities"]) == {"tools", "resources"}
    assert result["capabilities"]["resources"]["subscribe"] is True
    assert result["ttlMs"] >= 0 and result["cacheScope"] in ("public", "private")
    assert result["_meta"] == {MCP + "serverInfo": SERVER_INFO}


def test_requests_without_meta_or_with_another_version_are_rejected(h: Harness) -> None:
    h.server.handle({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}})
    assert h.out[-1]["error"]["code"] == -32602
    bare = {MCP + "protocolVersion": VERSION}
    assert answer(h.request(2, "tools/list", bare), 2)["error"]["code"] == -32602
    old = {**META, MCP + "protocolVersion": "2025-11-25"}
    error = answer(h.request(3, "tools/list", old), 3)["error"]
    assert error["code"] == -32022
    assert error["data"] == {"supported": [VERSION], "requested": "2025-11-25"}


def test_tools_list(h: Harness) -> None:
    result = answer(h.request(1, "tools/list"), 1)["result"]
    assert [t["name"] for t in result["tools"]] == [
        "build",
        "deploy",
        "status",
        "add_note",
        "search",
    ]
    assert result["resultType"] == "complete" and "ttlMs" in result and "cacheScope" in result
    for t in result["tools"]:
        jsonschema.Draft202012Validator.check_schema(t["inputSchema"])


def test_unknown_method_and_tool(h: Harness) -> None:
    assert answer(h.request(1, "prompts/list"), 1)["error"]["code"] == -32601
    assert answer(h.request(2, "tools/call", name="nope"), 2)["error"]["code"] == -32602


def test_notifications_and_responses_get_no_answer(h: Harness) -> None:
    h.notify("notifications/cancelled", {"requestId": 42})
    h.server.handle({"jsonrpc": "2.0", "id": 7, "result": {}})
    h.server.handle(["not", "an", "object"])
    assert h.out == []


def test_build_reports_increasing_progress_then_a_valid_result(h: Harness) -> None:
    meta = {**META, "progressToken": "p1"}
    sent = h.request(5, "tools/call", meta, name="build", arguments={"target": "app"})
    progress = [m["params"] for m in sent if m.get("method") == "notifications/progress"]
    assert [p["progress"] for p in progress] == [1, 2, 3]
    assert all(p["progressToken"] == "p1" and p["total"] == 3 for p in progress)
    assert sent[-1]["id"] == 5  # the result comes after every progress notification
    result = sent[-1]["result"]
    assert result["resultType"] == "complete" and result["isError"] is False
    jsonschema.validate(result["structuredContent"], tool("build")["outputSchema"])
    assert result["structuredContent"]["artifact"] == "app-1.4.2.tar.gz"


def test_build_without_a_token_sends_no_progress(h: Harness) -> None:
    sent = h.request(5, "tools/call", name="build", arguments={"target": "app"})
    assert [m.get("method") for m in sent] == [None]


def test_deploy_asks_for_confirmation_then_completes_on_the_retry(h: Harness) -> None:
    first = h.call(6, "deploy", arguments={"env": "staging"})
    assert first["resultType"] == "input_required"
    assert set(first) == {"resultType", "inputRequests", "requestState", "_meta"}
    ask = first["inputRequests"]["confirm"]
    assert ask["method"] == "elicitation/create" and ask["params"]["mode"] == "form"
    assert ask["params"]["requestedSchema"]["required"] == ["confirm"]
    responses = {"confirm": {"action": "accept", "content": {"confirm": True}}}
    final = h.call(
        7,
        "deploy",
        arguments={"env": "staging"},
        inputResponses=responses,
        requestState=first["requestState"],
    )
    assert final["resultType"] == "complete" and final["isError"] is False
    assert final["content"][0]["text"] == "deployed 1.4.2 to staging"
    assert h.server.deployed == {"staging": "1.4.2"}
    assert any("confirmed by the user" in line for line in h.logs)


def test_deploy_declined(h: Harness) -> None:
    first = h.call(1, "deploy", arguments={"env": "staging"})
    responses = {"confirm": {"action": "decline"}}
    final = h.call(
        2,
        "deploy",
        arguments={"env": "staging"},
        inputResponses=responses,
        requestState=first["requestState"],
    )
    assert "cancelled" in final["content"][0]["text"]
    assert h.server.deployed == {}


@pytest.mark.parametrize(
    "tamper",
    [
        lambda s: s[:-2] + ("AA" if not s.endswith("AA") else "BB"),  # the MAC
        lambda s: "x" + s,  # the payload
        lambda s: "not a state",
    ],
)
def test_deploy_rejects_a_state_it_did_not_issue(h: Harness, tamper: Any) -> None:
    first = h.call(1, "deploy", arguments={"env": "staging"})
    responses = {"confirm": {"action": "accept", "content": {"confirm": True}}}
    sent = h.request(
        2,
        "tools/call",
        name="deploy",
        arguments={"env": "staging"},
        inputResponses=responses,
        requestState=tamper(first["requestState"]),
    )
    assert answer(sent, 2)["error"]["code"] == -32602
    assert h.server.deployed == {}


def test_deploy_state_is_bound_to_its_arguments(h: Harness) -> None:
    first = h.call(1, "deploy", arguments={"env": "staging"})
    responses = {"confirm": {"action": "accept", "content": {"confirm": True}}}
    sent = h.request(
        2,
        "tools/call",
        name="deploy",
        arguments={"env": "production"},
        inputResponses=responses,
        requestState=first["requestState"],
    )
    assert answer(sent, 2)["error"]["code"] == -32602


def test_deploy_never_asks_a_client_that_cannot_elicit(h: Harness) -> None:
    meta = {**META, MCP + "clientCapabilities": {}}
    result = h.call(1, "deploy", meta, arguments={"env": "staging"})
    assert result["resultType"] == "complete" and result["isError"] is True
    assert "inputRequests" not in result


def test_status_breaks_its_output_schema_on_purpose(h: Harness) -> None:
    result = h.call(1, "status", arguments={"env": "staging"})
    assert result["resultType"] == "complete"
    assert result["structuredContent"]["healthy"] == "no"
    with pytest.raises(jsonschema.ValidationError, match="is not of type 'boolean'"):
        jsonschema.validate(result["structuredContent"], tool("status")["outputSchema"])


def test_resources_list_and_read(h: Harness) -> None:
    listed = answer(h.request(1, "resources/list"), 1)["result"]
    assert [r["uri"] for r in listed["resources"]] == [NOTE_URI]
    assert listed["resultType"] == "complete"
    read = answer(h.request(2, "resources/read", uri=NOTE_URI), 2)["result"]
    assert read["contents"][0]["text"].startswith("# To do\n")
    assert read["ttlMs"] == 0 and read["cacheScope"] == "private"
    assert "resultType" not in read  # the deliberate violation
    missing = answer(h.request(3, "resources/read", uri="demo://nope"), 3)
    assert missing["error"]["code"] == -32602


def test_subscription_acknowledged_then_notified_when_the_note_changes(h: Harness) -> None:
    filters = {"resourceSubscriptions": [NOTE_URI, "demo://other"], "toolsListChanged": True}
    sent = h.request(4, "subscriptions/listen", notifications=filters)
    assert sent == [
        {
            "jsonrpc": "2.0",
            "method": "notifications/subscriptions/acknowledged",
            "params": {
                "_meta": {MCP + "subscriptionId": 4},
                "notifications": {"resourceSubscriptions": [NOTE_URI]},
            },
        }
    ]
    sent = h.request(9, "tools/call", name="add_note", arguments={"text": "ship it"})
    assert sent[0] == {
        "jsonrpc": "2.0",
        "method": "notifications/resources/updated",
        "params": {"_meta": {MCP + "subscriptionId": 4}, "uri": NOTE_URI},
    }
    assert answer(sent, 9)["result"]["resultType"] == "complete"
    read = answer(h.request(10, "resources/read", uri=NOTE_URI), 10)["result"]
    assert "- ship it\n" in read["contents"][0]["text"]


def test_a_cancelled_subscription_gets_no_more_events(h: Harness) -> None:
    h.request(4, "subscriptions/listen", notifications={"resourceSubscriptions": [NOTE_URI]})
    h.notify("notifications/cancelled", {"requestId": 4})
    sent = h.request(5, "tools/call", name="add_note", arguments={"text": "x"})
    assert [m.get("method") for m in sent] == [None]
    assert any("subscription 4 closed" in line for line in h.logs)


def test_a_cancelled_search_stops_without_answering(h: Harness) -> None:
    meta = {**META, "progressToken": "s"}
    body = {"name": "search", "arguments": {"query": "q"}, "_meta": meta}
    h.server.handle({"jsonrpc": "2.0", "id": 11, "method": "tools/call", "params": body})
    h.server.join(0.2)  # it is still searching
    assert [m.get("method") for m in h.out] == ["notifications/progress"]
    h.notify("notifications/cancelled", {"requestId": 11, "reason": "enough"})
    h.server.join(5.0)
    assert [m.get("method") for m in h.out] == ["notifications/progress"]
    assert any("cancelled by the client: enough" in line for line in h.logs)


def test_cancellation_matches_ids_as_json_values(h: Harness) -> None:
    body = {"name": "search", "arguments": {"query": "q"}, "_meta": META}
    h.server.handle({"jsonrpc": "2.0", "id": 11, "method": "tools/call", "params": body})
    h.notify("notifications/cancelled", {"requestId": "11"})  # another request's id
    h.server.join(0.2)
    assert not any("cancelled" in line for line in h.logs)
    h.server.close()  # the end of stdin stops it
    assert h.out == []


def test_runs_as_a_module_over_stdio() -> None:
    lines = [
        {"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": META}},
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "search", "arguments": {"query": "q"}, "_meta": META},
        },
    ]
    stdin = "".join(json.dumps(line) + "\n" for line in lines) + "not json\n\n"
    proc = subprocess.run(
        [sys.executable, "-m", "mcpeek.inspector.demo.server", "--delay", "0"],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert proc.returncode == 0
    out = [json.loads(line) for line in proc.stdout.splitlines()]
    assert [m.get("id") for m in out] == [1]  # the search was cut short by the end of stdin
    assert out[0]["result"]["supportedVersions"] == [VERSION]
    assert proc.stderr.splitlines()[0] == "demo-server: ready"
    assert "demo-server: bye" in proc.stderr
