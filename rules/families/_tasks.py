"""What the tasks rules share: which messages report a task, and the tasks seen so far.

2025-11-25 ``basic/utilities/tasks``: a receiver that accepts a task-augmented
request (``params.task``) answers with a ``CreateTaskResult`` (``result.task``);
the task's later states come in ``tasks/get``, ``tasks/cancel`` and ``tasks/list``
results and in ``notifications/tasks/status``. A task belongs to its receiver: the
side that sends those messages. The tasks rules judge no modern conversation
(2026-07-28 removed the core ``tasks/*`` methods: version.removed-method's).
"""

from __future__ import annotations

from typing import Any

from mcpeek.inspector.analysis.peek import may_hold
from mcpeek.rules.base import LEGACY_SPEC, Findings, Rule
from mcpeek.rules.context import MessageContext
from mcpeek.rules.families._bounded import MAX_KEYS, Lru
from mcpeek.rules.families._messages import as_list, request_params

TASKS = f"{LEGACY_SPEC}/basic/utilities/tasks"
SINCE = "2025-11-25"
TERMINAL = frozenset({"completed", "failed", "cancelled"})
RELATED = "io.modelcontextprotocol/related-task"
STATUS = "notifications/tasks/status"
#: Requests a receiver may run as a task (2025-11-25 capabilities.tasks.requests).
AUGMENTABLE = frozenset({"tools/call", "sampling/createMessage", "elicitation/create"})
REPORTING = frozenset({"tasks/get", "tasks/cancel", "tasks/list", STATUS}) | AUGMENTABLE


def augmented(ctx: MessageContext, params: Any = None) -> bool:
    """Whether a request (or, for a response, its request) carries ``params.task``."""
    entry = ctx.request if ctx.is_response else ctx.entry
    if entry is None or not may_hold(entry.record, "task"):
        return False  # (cheap: no decode of a request that cannot hold the word)
    if params is None:
        params = request_params(ctx) if ctx.is_response else ctx.params
    return isinstance(params, dict) and "task" in params


def reported(ctx: MessageContext) -> list[tuple[dict[str, Any], bool]]:
    """The task objects a message reports, each with whether it creates the task."""
    method = ctx.method
    if ctx.kind == "notification":
        params = ctx.params if method == STATUS else None
        return [(params, False)] if isinstance(params, dict) else []
    if ctx.kind != "result":
        return []
    if method in AUGMENTABLE and not augmented(ctx):
        return []
    result = ctx.result
    if not isinstance(result, dict):
        return []
    if method in ("tasks/get", "tasks/cancel"):
        return [(result, False)]
    if method == "tasks/list":
        return [(t, False) for t in as_list(result.get("tasks")) if isinstance(t, dict)]
    task = result.get("task")
    return [(task, True)] if isinstance(task, dict) else []


class TaskBook:
    """The last status of each task seen, by receiver side and task id (bounded)."""

    def __init__(self) -> None:
        self.status: Lru[tuple[str, str], tuple[str, int]] = Lru(MAX_KEYS)

    def get(self, receiver: str, task_id: Any) -> tuple[str, int] | None:
        return self.status.get((receiver, task_id)) if isinstance(task_id, str) else None

    def note(self, receiver: str, task: dict[str, Any], seq: int) -> None:
        task_id, status = task.get("taskId"), task.get("status")
        if isinstance(task_id, str) and isinstance(status, str):
            self.status.put((receiver, task_id), (status, seq))


def capability(capabilities: Any, method: str) -> bool | None:
    """Whether ``capabilities.tasks.requests`` lists ``method`` (``None``: unknown)."""
    if not isinstance(capabilities, dict):
        return None
    tasks = capabilities.get("tasks")
    requests = tasks.get("requests") if isinstance(tasks, dict) else None
    group, _, name = method.partition("/")
    category = requests.get(group) if isinstance(requests, dict) else None
    return isinstance(category, dict) and isinstance(category.get(name), dict)


OTHER = {"c2s": "s2c", "s2c": "c2s"}
FINAL = ("completed", "failed")  # terminal statuses; leaving "cancelled" is cancel-terminal's


class TaskRule(Rule):
    """Base of the tasks rules: from 2025-11-25 on, and never in a modern conversation
    (2026-07-28 has no core tasks: version.removed-method says so)."""

    since = SINCE
    message_eras = frozenset({"legacy", None})

    def on_message(self, ctx: MessageContext) -> Findings:
        return self.judge(ctx)

    def judge(self, ctx: MessageContext) -> Findings:
        raise NotImplementedError
