"""The tasks family (2025-11-25 basic/utilities/tasks), from built records."""

from __future__ import annotations

import json
from typing import Any

from mcpeek.inspector.records import Msg
from mcpeek.inspector.testing.records import RecordBuilder
from mcpeek.rules.engine import Reported
from mcpeek.rules.testing import lint_records

TASKS_CAPABILITY = {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}
STAMP = "2025-11-25T10:30:00Z"


def task(task_id: Any = "t1", status: str = "working") -> dict[str, Any]:
    return {
        "taskId": task_id,
        "status": status,
        "createdAt": STAMP,
        "lastUpdatedAt": STAMP,
        "ttl": 60000,
    }


def session(support: str | None = "optional", *, server_tasks: bool = True) -> RecordBuilder:
    """An initialized 2025-11-25 session whose server lists one tool, ``slow``."""
    b = RecordBuilder()
    capabilities: dict[str, Any] = {"tools": {}}
    if server_tasks:
        capabilities["tasks"] = TASKS_CAPABILITY
    client = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "c"}}
    client["clientInfo"]["version"] = "1"
    b.request("initialize", client, id=0)
    info = {"name": "s", "version": "1"}
    b.result(0, {"protocolVersion": "2025-11-25", "capabilities": capabilities, "serverInfo": info})
    b.notify("notifications/initialized", dir="c2s")
    tool: dict[str, Any] = {"name": "slow", "inputSchema": {"type": "object"}}
    if support is not None:
        tool["execution"] = {"taskSupport": support}
    b.request("tools/list", id=1)
    b.result(1, {"tools": [tool]})
    return b


def call_as_task(b: RecordBuilder, id: int, created: dict[str, Any]) -> None:
    b.request("tools/call", {"name": "slow", "arguments": {}, "task": {"ttl": 60000}}, id=id)
    b.result(id, {"task": created})


def tasks_found(b: RecordBuilder) -> list[Reported]:
    return [v for v in lint_records(b.records) if v.rule.startswith(("tasks.", "schema."))]


def test_a_conformant_task_lifecycle_is_clean() -> None:
    b = session()
    call_as_task(b, 2, task())
    b.notify("notifications/tasks/status", task(status="completed"))
    b.request("tasks/get", {"taskId": "t1"}, id=3)
    b.result(3, task(status="completed"))
    b.request("tasks/result", {"taskId": "t1"}, id=4)
    related = {"io.modelcontextprotocol/related-task": {"taskId": "t1"}}
    b.result(4, {"content": [], "_meta": related})
    b.request("tasks/cancel", {"taskId": "t1"}, id=5)
    b.error(5, -32602, "task already completed")
    assert [v.rule for v in tasks_found(b)] == []


def test_not_negotiated() -> None:
    b = session(server_tasks=False)
    call_as_task(b, 2, task())
    (v,) = [v for v in tasks_found(b) if v.rule == "tasks.not-negotiated"]
    assert v.severity == "error" and "MUST NOT" in v.message
    # another request type the receiver did not declare: SHOULD (warning)
    b = session()
    b.request("sampling/createMessage", {"messages": [], "maxTokens": 1, "task": {}}, dir="s2c")
    (v,) = [v for v in tasks_found(b) if v.rule == "tasks.not-negotiated"]
    assert v.severity == "warning"


def test_a_required_tool_called_without_a_task_answered_with_a_result() -> None:
    b = session("required")
    call = b.request("tools/call", {"name": "slow", "arguments": {}}, id=2)
    answer = b.result(2, {"content": [], "isError": True})  # the server MUST answer -32601
    found = [v for v in tasks_found(b) if v.rule == "tasks.tool-support"]
    assert [v.msgs[-1] for v in found] == [call.seq, answer.seq]
    assert "-32601" in found[1].message
    # answered -32601 as required: only the client's call is reported
    b = session("required")
    b.request("tools/call", {"name": "slow", "arguments": {}}, id=2)
    b.error(2, -32601, "call it as a task")
    assert len([v for v in tasks_found(b) if v.rule == "tasks.tool-support"]) == 1


def test_a_forbidden_tool_called_as_a_task() -> None:
    for support in (None, "forbidden"):
        b = session(support)
        call_as_task(b, 2, task())
        (v,) = [v for v in tasks_found(b) if v.rule == "tasks.tool-support"]
        assert "MUST NOT" in v.message


def test_status_transitions() -> None:
    b = session()
    call_as_task(b, 2, task(status="completed"))  # MUST begin working
    call_as_task(b, 3, task("t2"))
    b.notify("notifications/tasks/status", task("t2", "failed"))
    bad = b.notify("notifications/tasks/status", task("t2", "working"))
    found = [v for v in tasks_found(b) if v.rule == "tasks.status-transition"]
    assert len(found) == 2 and "begin working" in found[0].message
    assert found[1].msgs[-1] == bad.seq


def test_task_ids() -> None:
    b = session()
    call_as_task(b, 2, task(7))
    call_as_task(b, 3, task("t1"))
    call_as_task(b, 4, task("t1"))  # the same id for another task
    found = [v for v in tasks_found(b) if v.rule == "tasks.id"]
    assert len(found) == 2 and "not a string" in found[0].message
    assert "already names another task" in found[1].message


def test_related_task_missing() -> None:
    b = session()
    call_as_task(b, 2, task())
    b.request("tasks/result", {"taskId": "t1"}, id=3)  # blocks while the task needs input
    b.notify("notifications/tasks/status", task(status="input_required"))
    elicit = b.request("elicitation/create", {"message": "?", "requestedSchema": {}}, dir="s2c")
    b.result(elicit_id(elicit), {"action": "cancel"}, dir="c2s")
    b.notify("notifications/tasks/status", task(status="completed"))
    answer = b.result(3, {"content": []})  # no related-task _meta
    found = [v for v in tasks_found(b) if v.rule == "tasks.related-task-missing"]
    assert [v.msgs[-1] for v in found] == [elicit.seq, answer.seq]


def elicit_id(record: Msg) -> Any:
    return json.loads(record.raw or "")["id"]


def test_cancel_terminal() -> None:
    b = session()
    call_as_task(b, 2, task())
    b.notify("notifications/tasks/status", task(status="completed"))
    b.request("tasks/cancel", {"taskId": "t1"}, id=3)
    refused_wrongly = b.result(3, task(status="completed"))
    call_as_task(b, 4, task("t2"))
    b.request("tasks/cancel", {"taskId": "t2"}, id=5)
    not_cancelled = b.result(5, task("t2", "working"))
    call_as_task(b, 6, task("t3"))
    b.request("tasks/cancel", {"taskId": "t3"}, id=7)
    b.result(7, task("t3", "cancelled"))
    revived = b.notify("notifications/tasks/status", task("t3", "completed"))
    found = [v for v in tasks_found(b) if v.rule == "tasks.cancel-terminal"]
    assert [v.msgs[-1] for v in found] == [refused_wrongly.seq, not_cancelled.seq, revived.seq]
