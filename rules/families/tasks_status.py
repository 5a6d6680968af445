"""Tasks (2025-11-25 ``basic/utilities/tasks``): a task's ids, statuses and messages.

Each receiver's tasks are followed from their ``CreateTaskResult`` through the
``tasks/*`` results and ``notifications/tasks/status``; how a message reports a task
is in :mod:`mcpeek.rules.families._tasks`.
"""

from __future__ import annotations

from typing import Any

from mcpeek.inspector.analysis import Conversation
from mcpeek.rules.base import Finding, Findings
from mcpeek.rules.context import MessageContext
from mcpeek.rules.families._bounded import MAX_KEYS, Lru, PerConversation
from mcpeek.rules.families._messages import id_text, request_params, shown
from mcpeek.rules.families._tasks import (
    FINAL,
    OTHER,
    RELATED,
    REPORTING,
    TASKS,
    TERMINAL,
    TaskBook,
    TaskRule,
    reported,
)


class TasksStatusTransition(TaskRule):
    """ "Tasks MUST begin in the working status when created"; "Tasks with a completed,
    failed, or cancelled status are in a terminal state and MUST NOT transition to any
    other status" (a cancelled task's is tasks.cancel-terminal's)."""

    id = "tasks.status-transition"
    severity = "error"
    summary = "a task not working when created, or reported in a status after a terminal one"
    spec = f"{TASKS}#task-status-lifecycle"
    kinds = frozenset({"result", "notification"})
    methods = REPORTING

    def __init__(self) -> None:
        self._books: PerConversation[TaskBook] = PerConversation(TaskBook)

    def judge(self, ctx: MessageContext) -> Findings:
        tasks = reported(ctx)
        if not tasks:
            return None
        book = self._books(ctx.conversation)
        receiver = ctx.entry.dir
        findings: list[Finding] = []
        for task, created in tasks:
            task_id, status = task.get("taskId"), task.get("status")
            before = book.get(receiver, task_id)
            if created and isinstance(status, str) and status != "working":
                findings.append(
                    ctx.finding(
                        f"task {shown(task_id)} created in status {shown(status)} "
                        "(a task MUST begin working)"
                    )
                )
            elif before is not None and before[0] in FINAL and status != before[0]:
                findings.append(
                    ctx.finding(
                        f"task {shown(task_id)} reported {shown(status)} after it was "
                        f"{before[0]} (a terminal status is final)",
                        also=[before[1]],
                    )
                )
                continue  # the terminal status stays the truth
            book.note(receiver, task, ctx.seq)
        return findings

    def on_conversation_end(self, conversation: Conversation) -> Findings:
        self._books.drop(conversation)
        return None


class TasksId(TaskRule):
    """ "Task IDs MUST be a string value"; "Task IDs MUST be unique among all tasks
    controlled by the receiver"."""

    id = "tasks.id"
    severity = "error"
    summary = "a taskId that is not a string, or one receiver's taskId given to two tasks"
    spec = f"{TASKS}#task-id-requirements"
    kinds = frozenset({"result", "notification"})
    methods = REPORTING

    def __init__(self) -> None:
        # (receiver, taskId) → seq of the CreateTaskResult that created it
        self._created: PerConversation[Lru[tuple[str, str], int]] = PerConversation(
            lambda: Lru(MAX_KEYS)
        )

    def judge(self, ctx: MessageContext) -> Findings:
        findings: list[Finding] = []
        for task, created in reported(ctx):
            task_id = task.get("taskId")
            if not isinstance(task_id, str):
                findings.append(ctx.finding(f"taskId {shown(task_id)} is not a string"))
                continue
            if not created:
                continue
            known = self._created(ctx.conversation)
            earlier = known.get((ctx.entry.dir, task_id))
            if earlier is not None:
                findings.append(
                    ctx.finding(
                        f"taskId {shown(task_id)} given to a new task (id {id_text(ctx)}), "
                        "but it already names another task of this receiver",
                        also=[earlier],
                    )
                )
            known.put((ctx.entry.dir, task_id), ctx.seq)
        return findings

    def on_conversation_end(self, conversation: Conversation) -> Findings:
        self._created.drop(conversation)
        return None


def _related_id(meta_holder: Any) -> Any:
    meta = meta_holder.get("_meta") if isinstance(meta_holder, dict) else None
    related = meta.get(RELATED) if isinstance(meta, dict) else None
    return related.get("taskId") if isinstance(related, dict) else None


class TasksRelatedTaskMissing(TaskRule):
    """ "The tasks/result operation MUST include this metadata in its response"; "The
    receiver MUST include the io.modelcontextprotocol/related-task metadata in the
    request to associate it with the task" (a request of the receiver's while its task
    is input_required, when nothing else of the requestor's is in flight to be its cause).
    """

    id = "tasks.related-task-missing"
    severity = "error"
    summary = "a task's message without _meta related-task naming the task"
    spec = f"{TASKS}#associating-task-related-messages"
    kinds = frozenset({"request", "result", "notification"})

    def __init__(self) -> None:
        self._books: PerConversation[TaskBook] = PerConversation(TaskBook)

    def judge(self, ctx: MessageContext) -> Findings:
        method = ctx.method
        if ctx.kind == "result" and method == "tasks/result":
            wanted = request_params(ctx).get("taskId")
            if not isinstance(wanted, str) or _related_id(ctx.result) == wanted:
                return None
            return [
                ctx.finding(
                    f"tasks/result response (id {id_text(ctx)}) for task {shown(wanted)} has no "
                    f'_meta["{RELATED}"].taskId naming it',
                    also=[ctx.request.seq] if ctx.request is not None else [],
                )
            ]
        if method in REPORTING and ctx.kind != "request":
            tasks = reported(ctx)
            if tasks:
                book = self._books(ctx.conversation)
                for task, _ in tasks:
                    book.note(ctx.entry.dir, task, ctx.seq)
            return None
        if ctx.kind != "request" or method is None or method.startswith("tasks/"):
            return None
        return self._receiver_request(ctx)

    def _receiver_request(self, ctx: MessageContext) -> Findings:
        book = self._books.peek(ctx.conversation)
        if book is None:
            return None
        sender = ctx.entry.dir
        waiting = [
            task_id
            for (receiver, task_id), (status, _) in book.status.items()
            if receiver == sender and status == "input_required"
        ]
        if not waiting or _related_id(ctx.params) in waiting:
            return None
        requestor = OTHER[sender]
        for key, (flow, _) in ctx.conversation.in_flight.items():
            if key[0] == requestor and not (flow.method or "").startswith("tasks/"):
                return None  # the request may be for that one, not for the task
        return [
            ctx.finding(
                f"{ctx.method} (id {id_text(ctx)}) while task {shown(waiting[0])} is "
                f'input_required, without _meta["{RELATED}"].taskId naming it'
            )
        ]

    def on_conversation_end(self, conversation: Conversation) -> Findings:
        self._books.drop(conversation)
        return None


class TasksCancelTerminal(TaskRule):
    """ "Receivers MUST reject cancellation requests for tasks already in a terminal
    status ... with error code -32602"; "MUST transition the task to cancelled status
    before sending the response"; "Once a task is cancelled, it MUST remain in
    cancelled status"."""

    id = "tasks.cancel-terminal"
    severity = "error"
    summary = "tasks/cancel of a terminal task not refused with -32602, or cancelled not kept"
    spec = f"{TASKS}#task-cancellation"
    kinds = frozenset({"request", "result", "error", "notification"})
    methods = REPORTING

    def __init__(self) -> None:
        self._books: PerConversation[TaskBook] = PerConversation(TaskBook)
        # seq of a tasks/cancel request → the terminal status its task had then
        self._terminal: PerConversation[Lru[int, tuple[str, int]]] = PerConversation(
            lambda: Lru(MAX_KEYS)
        )

    def judge(self, ctx: MessageContext) -> Findings:
        book = self._books(ctx.conversation)
        if ctx.kind == "request":
            if ctx.method == "tasks/cancel":
                params = ctx.params
                task_id = params.get("taskId") if isinstance(params, dict) else None
                before = book.get(OTHER[ctx.entry.dir], task_id)
                if before is not None and before[0] in TERMINAL:
                    self._terminal(ctx.conversation).put(ctx.seq, before)
            return None
        findings: list[Finding] = []
        if ctx.method == "tasks/cancel" and ctx.request is not None:
            findings.extend(self._answer(ctx, ctx.request.seq))
        for task, _ in reported(ctx):
            before = book.get(ctx.entry.dir, task.get("taskId"))
            status = task.get("status")
            if before is not None and before[0] == "cancelled" and status != "cancelled":
                findings.append(
                    ctx.finding(
                        f"task {shown(task.get('taskId'))} reported {shown(status)} after it "
                        "was cancelled (it MUST remain cancelled)",
                        also=[before[1]],
                    )
                )
                continue
            book.note(ctx.entry.dir, task, ctx.seq)
        return findings

    def _answer(self, ctx: MessageContext, request_seq: int) -> list[Finding]:
        terminal = self._terminal(ctx.conversation).pop(request_seq, None)
        error = ctx.error if ctx.kind == "error" else None
        if terminal is not None:
            if isinstance(error, dict) and error.get("code") == -32602:
                return []
            what = "a result" if error is None else f"error {shown(error.get('code'))}"
            return [
                ctx.finding(
                    f"tasks/cancel (id {id_text(ctx)}) of a task already {terminal[0]} was "
                    f"answered with {what} (it MUST be refused with -32602)",
                    also=[terminal[1], request_seq],
                )
            ]
        result = ctx.result if ctx.kind == "result" else None
        if isinstance(result, dict) and result.get("status") != "cancelled":
            return [
                ctx.finding(
                    f"tasks/cancel (id {id_text(ctx)}) succeeded with status "
                    f"{shown(result.get('status'))} (the task MUST be cancelled first)",
                    also=[request_seq],
                )
            ]
        return []

    def on_conversation_end(self, conversation: Conversation) -> Findings:
        self._books.drop(conversation)
        self._terminal.drop(conversation)
        return None
