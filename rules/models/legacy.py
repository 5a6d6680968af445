"""The objects of 2025-11-25 that its params and results are made of: capabilities (with
tasks), the free-form ``_meta``, task metadata, tools, sampling and elicitation."""

from __future__ import annotations

from typing import Any, Literal

from mcpeek.rules.models import content as c
from mcpeek.rules.models._base import UNSET, Meta, Model, Unset, named, sub
from mcpeek.rules.models.content import (
    AudioContent,
    Icon,
    ImageContent,
    ModelPreferences,
    RequestId,
    Role,
    TextContent,
    ToolAnnotations,
    ToolChoice,
    ToolUseContent,
)
from mcpeek.rules.models.forms import RequestedSchema

# -- capabilities ----------------------------------------------------------------------------


class RootsCapability(Model):
    listChanged: bool | Unset = UNSET


class SamplingCapability(Model):
    context: Meta | Unset = UNSET
    tools: Meta | Unset = UNSET


class ElicitationCapability(Model):
    form: Meta | Unset = UNSET
    url: Meta | Unset = UNSET


class _Create(Model):
    createMessage: Meta | Unset = UNSET
    create: Meta | Unset = UNSET
    call: Meta | Unset = UNSET


class TaskRequests(Model):
    sampling: _Create | Unset = UNSET
    elicitation: _Create | Unset = UNSET
    tools: _Create | Unset = UNSET


class TasksCapability(Model):
    list: Meta | Unset = UNSET
    cancel: Meta | Unset = UNSET
    requests: TaskRequests | Unset = UNSET


class ClientCapabilities(Model):
    experimental: dict[str, Meta] | Unset = UNSET
    roots: RootsCapability | Unset = UNSET
    sampling: SamplingCapability | Unset = UNSET
    elicitation: ElicitationCapability | Unset = UNSET
    tasks: TasksCapability | Unset = UNSET


class ListChanged(Model):
    listChanged: bool | Unset = UNSET


class ResourcesCapability(ListChanged):
    subscribe: bool | Unset = UNSET


class ServerCapabilities(Model):
    experimental: dict[str, Meta] | Unset = UNSET
    logging: Meta | Unset = UNSET
    completions: Meta | Unset = UNSET
    prompts: ListChanged | Unset = UNSET
    resources: ResourcesCapability | Unset = UNSET
    tools: ListChanged | Unset = UNSET
    tasks: TasksCapability | Unset = UNSET


# -- params shared by every request --------------------------------------------------------
class RequestMeta(Model):
    progressToken: RequestId | Unset = UNSET


class RequestParams(Model):
    meta: RequestMeta | Unset = named("_meta")


class TaskMetadata(Model):
    ttl: int | Unset = UNSET


class TaskParams(RequestParams):
    task: TaskMetadata | Unset = UNSET


# -- tools, sampling, elicitation, tasks -----------------------------------------------------
class ToolSchema(Model):
    type: Literal["object"]
    properties: dict[str, Meta] | Unset = UNSET
    required: list[str] | Unset = UNSET
    schema: str | Unset = named("$schema")


class ToolExecution(Model):
    taskSupport: Literal["forbidden", "optional", "required"] | Unset = UNSET


class Tool(Model):
    name: str
    title: str | Unset = UNSET
    description: str | Unset = UNSET
    inputSchema: ToolSchema
    outputSchema: ToolSchema | Unset = UNSET
    annotations: ToolAnnotations | Unset = UNSET
    execution: ToolExecution | Unset = UNSET
    icons: list[Icon] | Unset = UNSET
    meta: Meta | Unset = named("_meta")


class ToolResultContent(c.ToolResultContent, tag="tool_result"):
    structuredContent: Meta | Unset = UNSET


SamplingBlock = TextContent | ImageContent | AudioContent | ToolUseContent | ToolResultContent


class SamplingMessage(Model):
    role: Role
    content: SamplingBlock | list[SamplingBlock]
    meta: Meta | Unset = named("_meta")


class CreateMessageParams(TaskParams):
    messages: list[SamplingMessage]
    maxTokens: int
    modelPreferences: ModelPreferences | Unset = UNSET
    systemPrompt: str | Unset = UNSET
    includeContext: Literal["allServers", "none", "thisServer"] | Unset = UNSET
    temperature: float | Unset = UNSET
    stopSequences: list[str] | Unset = UNSET
    metadata: Meta | Unset = UNSET
    tools: list[Tool] | Unset = UNSET
    toolChoice: ToolChoice | Unset = UNSET


class ElicitParams(TaskParams):
    """``ElicitRequestURLParams | ElicitRequestFormParams``: ``mode`` says which."""

    mode: Literal["form", "url"] | Unset = UNSET
    message: str
    requestedSchema: Any = UNSET
    url: Any = UNSET
    elicitationId: Any = UNSET

    def __post_init__(self) -> None:
        needed = (
            (("url", str), ("elicitationId", str))
            if self.mode == "url"
            else (("requestedSchema", RequestedSchema),)
        )
        for name, typ in needed:
            value = getattr(self, name)
            if value is UNSET:
                raise ValueError(f"Object missing required field `{name}`")
            sub(value, typ, f".{name}")


class ElicitUrlParams(TaskParams):
    mode: Literal["url"]
    message: str
    url: str
    elicitationId: str


class Task(Model):
    """A 2025-11-25 task (its ``ttl`` is required and may be null)."""

    taskId: str
    status: Literal["cancelled", "completed", "failed", "input_required", "working"]
    statusMessage: str | Unset = UNSET
    createdAt: str
    lastUpdatedAt: str
    ttl: int | None
    pollInterval: int | Unset = UNSET
