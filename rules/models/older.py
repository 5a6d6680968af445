"""2025-06-18, 2025-03-26 and 2024-11-05: the 2025-11-25 models, minus what came later.

What each older revision lacks is removed (core tasks and their notifications,
``notifications/elicitation/complete``, -32042; ``elicitation/create`` before
2025-06-18), ``notifications/cancelled`` needs its ``requestId`` again, and the
content blocks a revision did not know yet are refused where it listed them:
sampling content is one text/image/audio block (text/image in 2024-11-05),
tool and prompt content has no ``resource_link`` before 2025-06-18 and no
``audio`` in 2024-11-05. Members added later stay typed as in 2025-11-25 (an
older peer sending them with another type is reported; none is known to).
"""

from __future__ import annotations

from typing import Any

from mcpeek.rules.models import v2025_11_25 as base
from mcpeek.rules.models._base import Problem
from mcpeek.rules.models.content import (
    AudioContent,
    EmbeddedResource,
    ImageContent,
    RequestId,
    ResourceLink,
    TextContent,
)
from mcpeek.rules.models.registry import Check, Method, Version, without


class CancelledParams(base.CancelledParams):
    requestId: RequestId  # required again before 2025-11-25


def _tag(block: Any) -> str:
    return str(getattr(type(block), "__struct_config__").tag)  # noqa: B009


def _refuse(block: Any, path: str, allowed: tuple[type, ...], version: str) -> Problem | None:
    if isinstance(block, allowed):
        return None
    shown = ", ".join(repr(str(getattr(t, "__struct_config__").tag)) for t in allowed)  # noqa: B009
    return Problem(
        f"{path}.type", f"invalid value {_tag(block)!r} in {version} (expected one of {shown})"
    )


def _blocks(items: Any, path: str, allowed: tuple[type, ...], version: str) -> Problem | None:
    for i, block in enumerate(items):
        found = _refuse(block, f"{path}[{i}]", allowed, version)
        if found is not None:
            return found
    return None


def _sampling(content: Any, path: str, allowed: tuple[type, ...], version: str) -> Problem | None:
    if isinstance(content, list):
        return Problem(path, f"expected object, got array (one content block in {version})")
    return _refuse(content, path, allowed, version)


def _narrowed(
    version: str, blocks: tuple[type, ...], sampling: tuple[type, ...]
) -> dict[str, Method]:
    def tool_result(result: Any, strict: bool) -> Problem | None:
        return _blocks(result.content, "result.content", blocks, version)

    def prompt_result(result: Any, strict: bool) -> Problem | None:
        contents = [message.content for message in result.messages]
        for i, block in enumerate(contents):
            found = _refuse(block, f"result.messages[{i}].content", blocks, version)
            if found is not None:
                return found
        return None

    def sampling_params(params: Any, strict: bool) -> Problem | None:
        for i, message in enumerate(params.messages):
            found = _sampling(message.content, f"params.messages[{i}].content", sampling, version)
            if found is not None:
                return found
        return None

    def sampling_result(result: Any, strict: bool) -> Problem | None:
        return _sampling(result.content, "result.content", sampling, version)

    checks: dict[str, tuple[Check | None, Check | None]] = {
        "tools/call": (None, tool_result),
        "prompts/get": (None, prompt_result),
        "sampling/createMessage": (sampling_params, sampling_result),
    }
    return {
        method: base.REQUESTS[method]._replace(check_params=p, check_result=r)
        for method, (p, r) in checks.items()
    }


_LATER = (
    "tasks/get",
    "tasks/result",
    "tasks/cancel",
    "tasks/list",
    "notifications/tasks/status",
    "notifications/elicitation/complete",
)
_CANCELLED = {"notifications/cancelled": Method(CancelledParams)}
_BLOCKS = (TextContent, ImageContent, AudioContent, ResourceLink, EmbeddedResource)
_SAMPLING = (TextContent, ImageContent, AudioContent)


def _older(
    name: str, *removed: str, blocks: tuple[type, ...], sampling: tuple[type, ...]
) -> Version:
    return without(
        base.VERSION,
        name,
        *_LATER,
        *removed,
        requests=_narrowed(name, blocks, sampling),
        notifications=_CANCELLED,
        errors={},
        task_result=None,
    )


V2025_06_18 = _older("2025-06-18", blocks=_BLOCKS, sampling=_SAMPLING)
V2025_03_26 = _older(
    "2025-03-26",
    "elicitation/create",
    blocks=(TextContent, ImageContent, AudioContent, EmbeddedResource),
    sampling=_SAMPLING,
)
V2024_11_05 = _older(
    "2024-11-05",
    "elicitation/create",
    blocks=(TextContent, ImageContent, EmbeddedResource),
    sampling=(TextContent, ImageContent),
)
