"""The objects of 2026-07-28 that its params and results are made of: capabilities, the
per-request ``_meta``, tools, sampling, elicitation, roots, the input requests of an
``InputRequiredResult``, the result bases and error data; and the checks a model cannot
make alone (what they leave out unless ``strict``: see :mod:`mcpeek.rules.models.v2026_07_28`)."""

from __future__ import annotations

from typing import Any, Literal

from mcpeek.rules.models._base import (
    UNSET,
    Meta,
    Model,
    Problem,
    Unset,
    converted_problem,
    json_type,
    named,
    required,
    sub,
)
from mcpeek.rules.models.content import (
    AudioContent,
    Icon,
    ImageContent,
    Implementation,
    LoggingLevel,
    ModelPreferences,
    RequestId,
    Role,
    Root,
    TextContent,
    ToolAnnotations,
    ToolChoice,
    ToolResultContent,
    ToolUseContent,
)
from mcpeek.rules.models.forms import ElicitResult, RequestedSchema

MCP = "io.modelcontextprotocol/"


# -- capabilities and _meta ------------------------------------------------------------------


class SamplingCapability(Model):
    context: Meta | Unset = UNSET
    tools: Meta | Unset = UNSET


class ElicitationCapability(Model):
    form: Meta | Unset = UNSET
    url: Meta | Unset = UNSET


class ClientCapabilities(Model):
    experimental: dict[str, Meta] | Unset = UNSET
    roots: Meta | Unset = UNSET
    sampling: SamplingCapability | Unset = UNSET
    elicitation: ElicitationCapability | Unset = UNSET
    extensions: dict[str, Meta] | Unset = UNSET


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
    extensions: dict[str, Meta] | Unset = UNSET


class RequestMeta(Model):
    """RequestMetaObject; its two required members are checked when ``strict``."""

    progressToken: RequestId | Unset = UNSET
    protocolVersion: str | Unset = named(MCP + "protocolVersion")
    clientInfo: Implementation | Unset = named(MCP + "clientInfo")
    clientCapabilities: ClientCapabilities | Unset = named(MCP + "clientCapabilities")
    logLevel: LoggingLevel | Unset = named(MCP + "logLevel")


class NotificationMeta(Model):
    subscriptionId: RequestId | Unset = named(MCP + "subscriptionId")


class ResultMeta(Model):
    serverInfo: Implementation | Unset = named(MCP + "serverInfo")


class ListenResultMeta(ResultMeta):
    subscriptionId: RequestId = required(MCP + "subscriptionId")


# -- tools, sampling, elicitation, roots ----------------------------------------------------
class InputSchema(Model):
    type: Literal["object"]
    schema: str | Unset = named("$schema")


class OutputSchema(Model):
    schema: str | Unset = named("$schema")


class Tool(Model):
    name: str
    title: str | Unset = UNSET
    description: str | Unset = UNSET
    inputSchema: InputSchema
    outputSchema: OutputSchema | Unset = UNSET
    annotations: ToolAnnotations | Unset = UNSET
    icons: list[Icon] | Unset = UNSET
    meta: Meta | Unset = named("_meta")


SamplingBlock = TextContent | ImageContent | AudioContent | ToolUseContent | ToolResultContent


class SamplingMessage(Model):
    role: Role
    content: SamplingBlock | list[SamplingBlock]
    meta: Meta | Unset = named("_meta")


class CreateMessageParams(Model):
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


class CreateMessageResult(SamplingMessage):
    model: str
    stopReason: str | Unset = UNSET


class ListRootsParams(Model):
    meta: Meta | Unset = named("_meta")


class ListRootsResult(Model):
    roots: list[Root]


class ElicitParams(Model):
    """``ElicitRequestFormParams | ElicitRequestURLParams``: ``mode`` says which."""

    mode: Literal["form", "url"] | Unset = UNSET
    message: str
    requestedSchema: Any = UNSET
    url: Any = UNSET

    def __post_init__(self) -> None:
        if self.mode == "url":
            _need(self.url, "url", str)
        else:
            _need(self.requestedSchema, "requestedSchema", RequestedSchema)


def _need(value: Any, name: str, typ: Any) -> None:
    if value is UNSET:
        raise ValueError(f"Object missing required field `{name}`")
    sub(value, typ, f".{name}")


# -- multi round-trip requests ------------------------------------------------------------
class CreateMessageRequest(Model, tag_field="method", tag="sampling/createMessage"):
    params: CreateMessageParams


class ListRootsRequest(Model, tag_field="method", tag="roots/list"):
    params: ListRootsParams | Unset = UNSET


class ElicitRequest(Model, tag_field="method", tag="elicitation/create"):
    params: ElicitParams


InputRequest = CreateMessageRequest | ListRootsRequest | ElicitRequest


INPUT_METHODS = frozenset({"sampling/createMessage", "roots/list", "elicitation/create"})


def response_order(value: Any) -> tuple[type[Model], ...]:
    """InputResponse = CreateMessageResult | ListRootsResult | ElicitResult, likeliest first."""
    if isinstance(value, dict) and "action" in value:
        return (ElicitResult, ListRootsResult, CreateMessageResult)
    if isinstance(value, dict) and "roots" in value:
        return (ListRootsResult, ElicitResult, CreateMessageResult)
    return (CreateMessageResult, ElicitResult, ListRootsResult)


# -- results and error data, and the checks a model cannot make alone ------------------------
class Result(Model):
    meta: ResultMeta | Unset = named("_meta")
    resultType: str | Unset = UNSET


class CacheableResult(Result):
    ttlMs: Any = UNSET  # integer >= 0 and "public" | "private", checked when strict
    cacheScope: Any = UNSET


class MissingCapabilityData(Model):
    requiredCapabilities: ClientCapabilities


class UnsupportedVersionData(Model):
    supported: Any = UNSET  # string[], its presence checked when strict
    requested: Any = UNSET  # string, likewise


def check_request_meta(params: Any, strict: bool) -> Problem | None:
    if not strict:
        return None
    meta = params.meta
    if meta is UNSET:
        return Problem("params", "missing required field `_meta`")
    for name in ("protocolVersion", "clientCapabilities"):
        if getattr(meta, name) is UNSET:
            return Problem("params._meta", f"missing required field `{MCP}{name}`")
    return None


def check_result(result: Any, strict: bool) -> Problem | None:
    if strict and result.resultType is UNSET:
        return Problem("result", "missing required field `resultType`")
    if strict and isinstance(result, CacheableResult):
        ttl, scope = result.ttlMs, result.cacheScope
        if ttl is UNSET or scope is UNSET:
            return Problem(
                "result", f"missing required field `{'ttlMs' if ttl is UNSET else 'cacheScope'}`"
            )
        if type(ttl) is not int or ttl < 0:
            got = ttl if type(ttl) is int else json_type(ttl)
            return Problem("result.ttlMs", f"expected int >= 0, got {got}")
        if scope not in ("private", "public"):
            return Problem(
                "result.cacheScope",
                f"invalid value {scope!r} (expected one of 'private', 'public')",
            )
    return None


def check_input_required(result: Any, strict: bool) -> Problem | None:
    found = check_result(result, strict)
    if found is not None or not isinstance(result.inputRequests, dict):
        return found
    for key, value in result.inputRequests.items():
        if not strict and (not isinstance(value, dict) or value.get("method") not in INPUT_METHODS):
            continue  # mrtr.bad-input-request says so
        found = converted_problem(f"result.inputRequests[{key!r}]", value, InputRequest)
        if found is not None:
            return found
    return None


def check_unsupported_version(data: Any, strict: bool) -> Problem | None:
    for name in ("supported", "requested"):
        value = getattr(data, name)
        if value is UNSET:
            if strict:
                return Problem("error.data", f"missing required field `{name}`")
            continue
        if name == "requested" and not isinstance(value, str):
            return Problem("error.data.requested", f"expected str, got {json_type(value)}")
        if name == "supported":
            if not isinstance(value, list):
                if strict:
                    return Problem(
                        "error.data.supported", f"expected array, got {json_type(value)}"
                    )
                continue
            for i, item in enumerate(value):
                if not isinstance(item, str):
                    return Problem(
                        f"error.data.supported[{i}]", f"expected str, got {json_type(item)}"
                    )
    return None
