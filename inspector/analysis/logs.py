"""Which request a log message (``notifications/message``) belongs to, if any.

Only what the spec ties a log message to counts: on one shared channel (stdio,
an HTTP GET stream) being in flight at the time is no tie. A log message whose
``_meta`` names a task (``io.modelcontextprotocol/related-task``, 2025-11-25
tasks) belongs to the request that created the task; one whose ``_meta``
carries a ``progressToken`` to the request that gave that token; and at
2026-07-28, where logging is request-scoped ("the server MAY send
``notifications/message`` … on the response stream of that request"), to the
one in-flight request that set ``io.modelcontextprotocol/logLevel``. Anything
else is a flow of its own: a 2025-11-25 server logs for the session (its level
is ``logging/setLevel``'s), not for whichever request happens to be running.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Iterable
from typing import Any

from mcpeek.inspector.analysis.flow import Attempt, Flow
from mcpeek.inspector.analysis.peek import UNREAD, UNSET, ParamsPeek

#: How many task ids are remembered per conversation (oldest forgotten first).
TASK_LIMIT = 4096


class TaskOwners:
    """The request that created each task (its result's ``task.taskId``), bounded."""

    def __init__(self) -> None:
        self._flows: OrderedDict[str, Flow] = OrderedDict()

    def created(self, task: Any, flow: Flow) -> None:
        task_id = task.get("taskId") if isinstance(task, dict) else None
        if isinstance(task_id, str):
            self._flows[task_id] = flow
            if len(self._flows) > TASK_LIMIT:
                self._flows.popitem(last=False)

    def get(self, related: Any) -> Flow | None:
        task_id = related.get("taskId") if isinstance(related, dict) else None
        return self._flows.get(task_id) if isinstance(task_id, str) else None


def log_owner(
    params: ParamsPeek,
    in_flight: Iterable[tuple[tuple[Any, ...], tuple[Flow, Attempt]]],
    tasks: TaskOwners,
    by_token: Callable[[Any], Flow | None],
) -> Flow | None:
    """The flow a log message from the server belongs to, or None (a flow of its own)."""
    meta = params.meta
    if meta is not None:
        if meta.related_task is not UNSET:
            return tasks.get(meta.related_task)
        if meta.progress_token is not UNSET:
            return by_token(meta.progress_token)
    owner = None
    for key, (flow, attempt) in in_flight:
        # (never a subscriptions/listen stream: the spec keeps logs off it)
        if (
            key[0] == "c2s"
            and attempt.log_level is not UNSET
            and attempt.log_level is not UNREAD  # (as before: what was read says so)
            and flow.method != "subscriptions/listen"
        ):
            if owner is not None:
                return None  # two requests asked for logs: the wire does not say whose
            owner = flow
    return owner
