"""2025-11-25 (the last legacy revision): every request's params and result, notification
params, error data.

Differences from 2026-07-28 that show here: the ``initialize`` handshake,
``ping``, ``logging/setLevel``, resource (un)subscription, core tasks
(``tasks/*``, task-augmented ``tools/call`` / ``sampling/createMessage`` /
``elicitation/create`` answered by a ``CreateTaskResult``), server-initiated
requests answered by the client, a free-form ``_meta``, tool schemas with typed
``properties``/``required`` and an ``outputSchema`` of ``type: object``, an object
``structuredContent``, URL elicitations with an ``elicitationId``, and -32042.
"""

from __future__ import annotations

from typing import Any

from mcpeek.rules.models import forms
from mcpeek.rules.models._base import UNSET, Meta, Model, Unset, named
from mcpeek.rules.models.content import (
    CompleteArgument,
    CompleteContext,
    ContentBlock,
    Implementation,
    LoggingLevel,
    Prompt,
    PromptMessage,
    PromptReference,
    RequestId,
    Resource,
    ResourceContents,
    ResourceTemplate,
    ResourceTemplateReference,
    Role,
    Root,
)
from mcpeek.rules.models.legacy import (
    ClientCapabilities,
    CreateMessageParams,
    ElicitParams,
    ElicitUrlParams,
    RequestParams,
    SamplingBlock,
    ServerCapabilities,
    Task,
    TaskParams,
    Tool,
)
from mcpeek.rules.models.registry import ErrorData, Method, Version

# -- params ----------------------------------------------------------------------------------


class PaginatedParams(RequestParams):
    cursor: str | Unset = UNSET


class InitializeParams(RequestParams):
    protocolVersion: str
    capabilities: ClientCapabilities
    clientInfo: Implementation


class CallToolParams(TaskParams):
    name: str
    arguments: dict[str, Any] | Unset = UNSET


class GetPromptParams(RequestParams):
    name: str
    arguments: dict[str, str] | Unset = UNSET


class UriParams(RequestParams):
    uri: str


class SetLevelParams(RequestParams):
    level: LoggingLevel


class CompleteParams(RequestParams):
    ref: PromptReference | ResourceTemplateReference
    argument: CompleteArgument
    context: CompleteContext | Unset = UNSET


class TaskIdParams(Model):
    taskId: str


# -- results ---------------------------------------------------------------------------------
class Result(Model):
    meta: Meta | Unset = named("_meta")


class InitializeResult(Result):
    protocolVersion: str
    capabilities: ServerCapabilities
    serverInfo: Implementation
    instructions: str | Unset = UNSET


class _Page(Result):
    nextCursor: str | Unset = UNSET


class ListResourcesResult(_Page):
    resources: list[Resource]


class ListResourceTemplatesResult(_Page):
    resourceTemplates: list[ResourceTemplate]


class ListPromptsResult(_Page):
    prompts: list[Prompt]


class ListToolsResult(_Page):
    tools: list[Tool]


class ListTasksResult(_Page):
    tasks: list[Task]


class ReadResourceResult(Result):
    contents: list[ResourceContents]


class GetPromptResult(Result):
    description: str | Unset = UNSET
    messages: list[PromptMessage]


class CallToolResult(Result):
    content: list[ContentBlock]
    structuredContent: Meta | Unset = UNSET
    isError: bool | Unset = UNSET


class Completion(Model):
    values: list[str]
    total: int | Unset = UNSET
    hasMore: bool | Unset = UNSET


class CompleteResult(Result):
    completion: Completion


class CreateMessageResult(Result):
    role: Role
    content: SamplingBlock | list[SamplingBlock]
    model: str
    stopReason: str | Unset = UNSET


class ListRootsResult(Result):
    roots: list[Root]


class ElicitResult(forms.ElicitResult):
    meta: Meta | Unset = named("_meta")


class TaskResult(Task):
    """GetTaskResult / CancelTaskResult: ``Result`` and ``Task`` at once."""

    meta: Meta | Unset = named("_meta")


class CreateTaskResult(Result):
    task: Task


# -- notifications and errors ----------------------------------------------------------------
class NotificationParams(Model):
    meta: Meta | Unset = named("_meta")


class CancelledParams(NotificationParams):
    requestId: RequestId | Unset = UNSET  # optional since tasks; required before
    reason: str | Unset = UNSET


class ProgressParams(NotificationParams):
    progressToken: RequestId
    progress: float
    total: float | Unset = UNSET
    message: str | Unset = UNSET


class LoggingMessageParams(NotificationParams):
    level: LoggingLevel
    logger: str | Unset = UNSET
    data: Any


class ResourceUpdatedParams(NotificationParams):
    uri: str


class ElicitationCompleteParams(Model):
    elicitationId: str


class TaskStatusParams(Task):
    meta: Meta | Unset = named("_meta")


class UrlElicitationData(Model):
    elicitations: list[ElicitUrlParams]


# -- the registry ----------------------------------------------------------------------------
_LISTS: dict[str, type[Model]] = {
    "resources/list": ListResourcesResult,
    "resources/templates/list": ListResourceTemplatesResult,
    "prompts/list": ListPromptsResult,
    "tools/list": ListToolsResult,
    "tasks/list": ListTasksResult,
}

REQUESTS: dict[str, Method] = {
    "initialize": Method(InitializeParams, InitializeResult),
    "ping": Method(RequestParams, Result, params_required=False),
    **{m: Method(PaginatedParams, r, params_required=False) for m, r in _LISTS.items()},
    "resources/read": Method(UriParams, ReadResourceResult),
    "resources/subscribe": Method(UriParams, Result),
    "resources/unsubscribe": Method(UriParams, Result),
    "prompts/get": Method(GetPromptParams, GetPromptResult),
    "tools/call": Method(CallToolParams, CallToolResult, task=True),
    "tasks/get": Method(TaskIdParams, TaskResult),
    "tasks/result": Method(TaskIdParams, Result),
    "tasks/cancel": Method(TaskIdParams, TaskResult),
    "logging/setLevel": Method(SetLevelParams, Result),
    "completion/complete": Method(CompleteParams, CompleteResult),
    "sampling/createMessage": Method(CreateMessageParams, CreateMessageResult, task=True),
    "roots/list": Method(RequestParams, ListRootsResult, params_required=False),
    "elicitation/create": Method(ElicitParams, ElicitResult, task=True),
}

_SIGNALS = (
    "notifications/initialized",
    "notifications/resources/list_changed",
    "notifications/tools/list_changed",
    "notifications/prompts/list_changed",
    "notifications/roots/list_changed",
)

NOTIFICATIONS: dict[str, Method] = {
    "notifications/cancelled": Method(CancelledParams),
    "notifications/progress": Method(ProgressParams),
    "notifications/message": Method(LoggingMessageParams),
    "notifications/resources/updated": Method(ResourceUpdatedParams),
    "notifications/tasks/status": Method(TaskStatusParams),
    "notifications/elicitation/complete": Method(ElicitationCompleteParams),
    **{m: Method(NotificationParams, params_required=False) for m in _SIGNALS},
}

VERSION = Version(
    name="2025-11-25",
    requests=REQUESTS,
    notifications=NOTIFICATIONS,
    errors={-32042: ErrorData("URLElicitationRequired", UrlElicitationData)},
    task_result=CreateTaskResult,
)
