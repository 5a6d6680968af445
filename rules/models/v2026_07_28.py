"""2026-07-28 (modern): every request's params and result, notification params, error data.

Faithful to ``schema.json`` of that version, with three deliberate choices:

- ``JSONObject`` members (capabilities, sampling ``metadata``) accept any JSON
  object: ``schema.json`` restricts their values to string | integer | boolean |
  object | array, but the TypeScript source of truth (``JSONValue = string |
  number | boolean | null | JSONObject | JSONArray``) allows floats and null.
- A result is read by its ``resultType`` ("clients can use [it] to determine how
  to parse and handle the result object"): ``input_required`` is an
  ``InputRequiredResult``, anything else the method's own result.
- What another catalog rule reports in the modern era is checked only when
  ``strict``: the per-request ``_meta`` fields (``meta.*``), ``resultType``
  (``result.result-type-missing``), ``ttlMs``/``cacheScope``
  (``cache.fields-missing``), an input request's method
  (``mrtr.bad-input-request``) and the presence of -32022's data
  (``version.unsupported-error-shape``).
"""

from __future__ import annotations

from typing import Annotated, Any

import msgspec

from mcpeek.rules.models._base import (
    UNSET,
    Model,
    Unset,
    any_of,
    named,
    required,
)
from mcpeek.rules.models.content import (
    CompleteArgument,
    CompleteContext,
    ContentBlock,
    LoggingLevel,
    Prompt,
    PromptMessage,
    PromptReference,
    RequestId,
    Resource,
    ResourceContents,
    ResourceTemplate,
    ResourceTemplateReference,
    SubscriptionFilter,
)
from mcpeek.rules.models.forms import ElicitResult
from mcpeek.rules.models.modern import (
    CacheableResult,
    CreateMessageParams,
    CreateMessageResult,
    ElicitParams,
    ListenResultMeta,
    ListRootsParams,
    ListRootsResult,
    MissingCapabilityData,
    NotificationMeta,
    RequestMeta,
    Result,
    ServerCapabilities,
    Tool,
    UnsupportedVersionData,
    check_input_required,
    check_request_meta,
    check_result,
    check_unsupported_version,
    response_order,
)
from mcpeek.rules.models.registry import ErrorData, Method, Version


# -- params ----------------------------------------------------------------------------------
class RequestParams(Model):
    meta: RequestMeta | Unset = named("_meta")


class PaginatedParams(RequestParams):
    cursor: str | Unset = UNSET


class _Retryable(RequestParams):
    inputResponses: dict[str, Any] | Unset = UNSET
    requestState: str | Unset = UNSET

    def __post_init__(self) -> None:
        if isinstance(self.inputResponses, dict):
            for key, value in self.inputResponses.items():
                any_of(value, response_order(value), f".inputResponses[{key!r}]")


class CallToolParams(_Retryable):
    name: str
    arguments: dict[str, Any] | Unset = UNSET


class GetPromptParams(_Retryable):
    name: str
    arguments: dict[str, str] | Unset = UNSET


class ReadResourceParams(_Retryable):
    uri: str


class ListenParams(RequestParams):
    notifications: SubscriptionFilter


class CompleteParams(RequestParams):
    ref: PromptReference | ResourceTemplateReference
    argument: CompleteArgument
    context: CompleteContext | Unset = UNSET


class NotificationParams(Model):
    meta: NotificationMeta | Unset = named("_meta")


class CancelledParams(NotificationParams):
    requestId: RequestId
    reason: str | Unset = UNSET


class ProgressParams(NotificationParams):
    progressToken: RequestId
    progress: float
    total: float | Unset = UNSET
    message: str | Unset = UNSET


class ResourceUpdatedParams(NotificationParams):
    uri: str


class AcknowledgedParams(NotificationParams):
    notifications: SubscriptionFilter


class LoggingMessageParams(NotificationParams):
    level: LoggingLevel
    logger: str | Unset = UNSET
    data: Any


# -- results ---------------------------------------------------------------------------------


class _Page(CacheableResult):
    nextCursor: str | Unset = UNSET


class DiscoverResult(CacheableResult):
    supportedVersions: list[str]
    capabilities: ServerCapabilities
    instructions: str | Unset = UNSET


class ListResourcesResult(_Page):
    resources: list[Resource]


class ListResourceTemplatesResult(_Page):
    resourceTemplates: list[ResourceTemplate]


class ListPromptsResult(_Page):
    prompts: list[Prompt]


class ListToolsResult(_Page):
    tools: list[Tool]


class ReadResourceResult(CacheableResult):
    contents: list[ResourceContents]


class ListenResult(Result):
    meta: ListenResultMeta = required("_meta")  # required here


class GetPromptResult(Result):
    description: str | Unset = UNSET
    messages: list[PromptMessage]


class CallToolResult(Result):
    content: list[ContentBlock]
    structuredContent: Any = UNSET
    isError: bool | Unset = UNSET


class Completion(Model):
    values: Annotated[list[str], msgspec.Meta(max_length=100)]
    total: int | Unset = UNSET
    hasMore: bool | Unset = UNSET


class CompleteResult(Result):
    completion: Completion


class InputRequiredResult(Result):
    inputRequests: dict[str, Any] | Unset = UNSET  # each an InputRequest: see check_input_required
    requestState: str | Unset = UNSET


# -- the registry ----------------------------------------------------------------------------
def _request(params: type[Model], result: type[Model], **kw: Any) -> Method:
    return Method(params, result, check_params=check_request_meta, check_result=check_result, **kw)


REQUESTS: dict[str, Method] = {
    "server/discover": _request(RequestParams, DiscoverResult),
    "resources/list": _request(PaginatedParams, ListResourcesResult),
    "resources/templates/list": _request(PaginatedParams, ListResourceTemplatesResult),
    "resources/read": _request(ReadResourceParams, ReadResourceResult, retryable=True),
    "subscriptions/listen": _request(ListenParams, ListenResult),
    "prompts/list": _request(PaginatedParams, ListPromptsResult),
    "prompts/get": _request(GetPromptParams, GetPromptResult, retryable=True),
    "tools/list": _request(PaginatedParams, ListToolsResult),
    "tools/call": _request(CallToolParams, CallToolResult, retryable=True),
    "completion/complete": _request(CompleteParams, CompleteResult),
    # Only inside an InputRequiredResult in this version, but typed all the same.
    "sampling/createMessage": Method(CreateMessageParams, CreateMessageResult),
    "roots/list": Method(ListRootsParams, ListRootsResult, params_required=False),
    "elicitation/create": Method(ElicitParams, ElicitResult),
}

NOTIFICATIONS: dict[str, Method] = {
    "notifications/cancelled": Method(CancelledParams),
    "notifications/progress": Method(ProgressParams),
    "notifications/message": Method(LoggingMessageParams),
    "notifications/resources/updated": Method(ResourceUpdatedParams),
    "notifications/subscriptions/acknowledged": Method(AcknowledgedParams),
    "notifications/resources/list_changed": Method(NotificationParams, params_required=False),
    "notifications/tools/list_changed": Method(NotificationParams, params_required=False),
    "notifications/prompts/list_changed": Method(NotificationParams, params_required=False),
}

VERSION = Version(
    name="2026-07-28",
    requests=REQUESTS,
    notifications=NOTIFICATIONS,
    errors={
        -32021: ErrorData("MissingRequiredClientCapability", MissingCapabilityData),
        -32022: ErrorData(
            "UnsupportedProtocolVersion", UnsupportedVersionData, check_unsupported_version
        ),
    },
    input_required=Method(RequestParams, InputRequiredResult, check_result=check_input_required),
)
