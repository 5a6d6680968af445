"""Schema objects that 2026-07-28 and 2025-11-25 define identically.

Content blocks, resources, prompts, identities, icons, annotations, roots,
completion references and subscription filters (elicitation forms are in
:mod:`mcpeek.rules.models.forms`). A block's ``type`` (or a reference's) is the tag
msgspec dispatches on; ``TextResourceContents | BlobResourceContents``, which
nothing tags, is one merged model checked in ``__post_init__``.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

import msgspec

from mcpeek.rules.models._base import UNSET, Meta, Model, Unset, json_type, named

Role = Literal["assistant", "user"]
LoggingLevel = Literal[
    "alert", "critical", "debug", "emergency", "error", "info", "notice", "warning"
]
RequestId = str | int  # also ProgressToken
Priority = Annotated[float, msgspec.Meta(ge=0, le=1)]


class Annotations(Model):
    audience: list[Role] | Unset = UNSET
    priority: Priority | Unset = UNSET
    lastModified: str | Unset = UNSET


class Icon(Model):
    src: str
    mimeType: str | Unset = UNSET
    sizes: list[str] | Unset = UNSET
    theme: Literal["dark", "light"] | Unset = UNSET


class Implementation(Model):
    name: str
    version: str
    title: str | Unset = UNSET
    description: str | Unset = UNSET
    icons: list[Icon] | Unset = UNSET
    websiteUrl: str | Unset = UNSET


# -- content blocks ------------------------------------------------------------------------
class _Block(Model, tag_field="type"):
    annotations: Annotations | Unset = UNSET
    meta: Meta | Unset = named("_meta")


class TextContent(_Block, tag="text"):
    text: str


class ImageContent(_Block, tag="image"):
    data: str
    mimeType: str


class AudioContent(_Block, tag="audio"):
    data: str
    mimeType: str


class ResourceContents(Model):
    """``TextResourceContents | BlobResourceContents``: ``text`` or ``blob``, a string."""

    uri: str
    mimeType: str | Unset = UNSET
    meta: Meta | Unset = named("_meta")
    text: Any = UNSET
    blob: Any = UNSET

    def __post_init__(self) -> None:
        if isinstance(self.text, str) or isinstance(self.blob, str):
            return
        if self.text is UNSET and self.blob is UNSET:
            raise ValueError("Object missing required field `text` (or `blob`)")
        member = "text" if self.text is not UNSET else "blob"
        got = json_type(getattr(self, member))
        raise ValueError(f"Expected `str`, got `{got}` - at `$.{member}`")


class ResourceLink(_Block, tag="resource_link"):
    uri: str
    name: str
    title: str | Unset = UNSET
    description: str | Unset = UNSET
    mimeType: str | Unset = UNSET
    size: int | Unset = UNSET
    icons: list[Icon] | Unset = UNSET


class EmbeddedResource(_Block, tag="resource"):
    resource: ResourceContents


ContentBlock = TextContent | ImageContent | AudioContent | ResourceLink | EmbeddedResource


class ToolUseContent(_Block, tag="tool_use"):
    id: str
    name: str
    input: dict[str, Any]


class ToolResultContent(_Block, tag="tool_result"):
    toolUseId: str
    content: list[ContentBlock]
    structuredContent: Any = UNSET
    isError: bool | Unset = UNSET


# -- what servers list -----------------------------------------------------------------------
class Resource(Model):
    uri: str
    name: str
    title: str | Unset = UNSET
    description: str | Unset = UNSET
    mimeType: str | Unset = UNSET
    size: int | Unset = UNSET
    annotations: Annotations | Unset = UNSET
    icons: list[Icon] | Unset = UNSET
    meta: Meta | Unset = named("_meta")


class ResourceTemplate(Model):
    uriTemplate: str
    name: str
    title: str | Unset = UNSET
    description: str | Unset = UNSET
    mimeType: str | Unset = UNSET
    annotations: Annotations | Unset = UNSET
    icons: list[Icon] | Unset = UNSET
    meta: Meta | Unset = named("_meta")


class PromptArgument(Model):
    name: str
    title: str | Unset = UNSET
    description: str | Unset = UNSET
    required: bool | Unset = UNSET


class Prompt(Model):
    name: str
    title: str | Unset = UNSET
    description: str | Unset = UNSET
    arguments: list[PromptArgument] | Unset = UNSET
    icons: list[Icon] | Unset = UNSET
    meta: Meta | Unset = named("_meta")


class PromptMessage(Model):
    role: Role
    content: ContentBlock


class ToolAnnotations(Model):
    title: str | Unset = UNSET
    readOnlyHint: bool | Unset = UNSET
    destructiveHint: bool | Unset = UNSET
    idempotentHint: bool | Unset = UNSET
    openWorldHint: bool | Unset = UNSET


class Root(Model):
    uri: str
    name: str | Unset = UNSET
    meta: Meta | Unset = named("_meta")


class ModelHint(Model):
    name: str | Unset = UNSET


class ModelPreferences(Model):
    hints: list[ModelHint] | Unset = UNSET
    costPriority: Priority | Unset = UNSET
    speedPriority: Priority | Unset = UNSET
    intelligencePriority: Priority | Unset = UNSET


class ToolChoice(Model):
    mode: Literal["auto", "none", "required"] | Unset = UNSET


class SubscriptionFilter(Model):
    toolsListChanged: bool | Unset = UNSET
    promptsListChanged: bool | Unset = UNSET
    resourcesListChanged: bool | Unset = UNSET
    resourceSubscriptions: list[str] | Unset = UNSET


# -- completion --------------------------------------------------------------------------
class PromptReference(Model, tag_field="type", tag="ref/prompt"):
    name: str
    title: str | Unset = UNSET


class ResourceTemplateReference(Model, tag_field="type", tag="ref/resource"):
    uri: str


class CompleteArgument(Model):
    name: str
    value: str


class CompleteContext(Model):
    arguments: dict[str, str] | Unset = UNSET
