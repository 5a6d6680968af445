"""What the progress, cancellation and subscription rules share: listen requests, cancel targets.

A server may cancel the client's ``subscriptions/listen`` request (that ends
the stream), so the cancellation and subscription rules follow the ids of
the client's listen requests (:class:`ListenIds`).
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

import msgspec

from mcpeek.inspector.analysis import Conversation
from mcpeek.inspector.analysis.peek import id_key
from mcpeek.rules.context import MessageContext
from mcpeek.rules.families._wire import WINDOW, as_dict

LISTEN = "subscriptions/listen"
CANCELLED = "notifications/cancelled"
OTHER_SIDE = {"c2s": "s2c", "s2c": "c2s"}


class ListenIds:
    """The ids of the client's ``subscriptions/listen`` requests, per conversation."""

    def __init__(self) -> None:
        self._ids: dict[str, OrderedDict[Any, int]] = {}

    def add(self, ctx: MessageContext) -> None:
        ids = self._ids.setdefault(ctx.conversation.key, OrderedDict())
        ids[id_key(ctx.entry.id)] = ctx.seq
        if len(ids) > WINDOW:
            ids.popitem(last=False)

    def get(self, conversation: Conversation, value: Any) -> int | None:
        ids = self._ids.get(conversation.key)
        return ids.get(id_key(value)) if ids is not None else None

    def forget(self, conversation: Conversation) -> None:
        self._ids.pop(conversation.key, None)


def cancel_target(ctx: MessageContext) -> Any:
    params = as_dict(ctx.params)
    if params is None or "requestId" not in params:
        return msgspec.UNSET  # schema.notification says so
    return params["requestId"]
