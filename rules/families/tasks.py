"""Tasks (2025-11-25 ``basic/utilities/tasks``): negotiation, tool support, lifecycle.

A requestor may augment a request with ``params.task`` when the receiver declared
it under ``capabilities.tasks.requests`` (and, for ``tools/call``, when the tool's
``execution.taskSupport`` allows it); the receiver answers with a
``CreateTaskResult`` and reports the task's status later. How the shared facts
are read is in :mod:`mcpeek.rules.families._tasks`.
"""

from __future__ import annotations

from typing import Any

from mcpeek.inspector.analysis import Conversation
from mcpeek.rules.base import Finding, Findings, Rule
from mcpeek.rules.context import MessageContext
from mcpeek.rules.families._bounded import MAX_KEYS, Lru, PerConversation
from mcpeek.rules.families._messages import id_text, request_params, shown
from mcpeek.rules.families._tasks import (
    AUGMENTABLE,
    RELATED,
    REPORTING,
    SINCE,
    TASKS,
    TERMINAL,
    TaskBook,
    augmented,
    capability,
    reported,
)
from mcpeek.rules.families._wire import side

OTHER = {"c2s": "s2c", "s2c": "c2s"}
FINAL = ("completed", "failed")  # terminal statuses; leaving "cancelled" is cancel-terminal's


class _TaskRule(Rule):
    since = SINCE

    def on_message(self, ctx: MessageContext) -> Findings:
        if ctx.era == "modern":
            return None  # 2026-07-28 has no core tasks (version.removed-method says so)
        return self.judge(ctx)

    def judge(self, ctx: MessageContext) -> Findings:
        raise NotImplementedError


class TasksNotNegotiated(_TaskRule):
    """ "If a server's capabilities do not include tasks.requests.tools.call, then clients
    MUST NOT attempt to use task augmentation on that server's tools" (error);
    "Requestors SHOULD only augment requests with a task if the corresponding
    capability has been declared by the receiver" (warning, the other request types)."""

    id = "tasks.not-negotiated"
    severity = "error"
    summary = "a task-augmented request of a type the receiver did not declare for tasks"
    spec = f"{TASKS}#capability-negotiation"
    kinds = frozenset({"request"})
    methods = AUGMENTABLE

    def judge(self, ctx: MessageContext) -> Findings:
        method = ctx.method
        if method is None or not augmented(ctx):
            return None
        declared = ctx.conversation.declared
        receiver = declared.server_capabilities if ctx.entry.dir == "c2s" else None
        if ctx.entry.dir == "s2c":
            receiver = declared.client_capabilities
        if capability(receiver, method) is not False:
            return None  # declared, or nothing known of the receiver's capabilities
        must = method == "tools/call"
        return [
            ctx.finding(
                f"task-augmented {method} (id {id_text(ctx)}), but the "
                f"{side(OTHER[ctx.entry.dir])} did not declare tasks.requests."
                f"{method.replace('/', '.')} ({'MUST NOT' if must else 'SHOULD NOT'})",
                severity=None if must else "warning",
            )
        ]


class TasksToolSupport(_TaskRule):
    """2025-11-25 tasks, tool-level negotiation: "If execution.taskSupport is not present
    or "forbidden", clients MUST NOT attempt to invoke the tool as a task"; "If
    execution.taskSupport is "required", clients MUST invoke the tool as a task. Servers
    MUST return a -32601 (Method not found) error if a client does not attempt to do so."
    """

    id = "tasks.tool-support"
    severity = "error"
    summary = "a tools/call against the tool's execution.taskSupport (client or server)"
    spec = f"{TASKS}#tool-level-negotiation"
    kinds = frozenset({"request", "result", "error"})
    methods = frozenset({"tools/call"})

    def __init__(self) -> None:
        # seq of a plain call of a "required" tool → the tool's name
        self._plain: PerConversation[Lru[int, str]] = PerConversation(lambda: Lru(MAX_KEYS))

    def judge(self, ctx: MessageContext) -> Findings:
        declared = ctx.conversation.declared
        if ctx.kind != "request":
            return self._answer(ctx)
        if ctx.entry.dir != "c2s" or not capability(declared.server_capabilities, "tools/call"):
            return None  # without the capability, tasks.not-negotiated judges the call
        name = ctx.flow.name
        tool = declared.tools.get(name) if name is not None else None
        if not isinstance(tool, dict):
            return None
        execution = tool.get("execution")
        support = execution.get("taskSupport") if isinstance(execution, dict) else None
        if augmented(ctx):
            if support in (None, "forbidden"):
                shown_support = "absent" if support is None else '"forbidden"'
                return [
                    ctx.finding(
                        f"tools/call of {shown(name)} (id {id_text(ctx)}) as a task, but the "
                        f"tool's execution.taskSupport is {shown_support} (MUST NOT)"
                    )
                ]
            return None
        if support != "required":
            return None
        self._plain(ctx.conversation).put(ctx.seq, name or "")
        return [
            ctx.finding(
                f"tools/call of {shown(name)} (id {id_text(ctx)}) without a task, but the "
                'tool\'s execution.taskSupport is "required" (the client MUST call it as a task)'
            )
        ]

    def _answer(self, ctx: MessageContext) -> Findings:
        request = ctx.request
        plain = self._plain.peek(ctx.conversation)
        if request is None or plain is None or ctx.entry.dir != "s2c":
            return None
        name = plain.pop(request.seq, None)
        if name is None:
            return None
        error = ctx.error if ctx.kind == "error" else None
        if isinstance(error, dict) and error.get("code") == -32601:
            return None
        what = "a result" if ctx.kind == "result" else f"error {shown(error)}"
        return [
            ctx.finding(
                f"the server answered the plain tools/call of {shown(name)} (id {id_text(ctx)}), "
                f'whose taskSupport is "required", with {what} (it MUST answer -32601)',
                also=[request.seq],
            )
        ]

    def on_conversation_end(self, conversation: Conversation) -> Findings:
        self._plain.drop(conversation)
        return None


class TasksStatusTransition(_TaskRule):
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


class TasksId(_TaskRule):
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


class TasksRelatedTaskMissing(_TaskRule):
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


class TasksCancelTerminal(_TaskRule):
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
