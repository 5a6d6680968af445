"""Tasks (2025-11-25 ``basic/utilities/tasks``): who may ask for a task, for which tool.

A requestor may augment a request with ``params.task`` when the receiver declared
it under ``capabilities.tasks.requests`` (and, for ``tools/call``, when the tool's
``execution.taskSupport`` allows it); the receiver answers with a
``CreateTaskResult`` and reports the task's status later (the status rules are in
:mod:`mcpeek.rules.families.tasks_status`; the shared facts in ``_tasks``).
"""

from __future__ import annotations

from mcpeek.inspector.analysis import Conversation
from mcpeek.rules.base import Findings
from mcpeek.rules.context import MessageContext
from mcpeek.rules.families._bounded import MAX_KEYS, Lru, PerConversation
from mcpeek.rules.families._messages import id_text, shown
from mcpeek.rules.families._tasks import (
    AUGMENTABLE,
    OTHER,
    TASKS,
    TaskRule,
    augmented,
    capability,
)
from mcpeek.rules.families._wire import side


class TasksNotNegotiated(TaskRule):
    """2025-11-25 tasks, capability negotiation: "If a server's capabilities do not
    include tasks.requests.tools.call, then clients MUST NOT attempt to use task
    augmentation on that server's tools" (error);
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


class TasksToolSupport(TaskRule):
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
