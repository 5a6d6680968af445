"""What a rule sees of one message: the entry, its flow and conversation, decoded lazily.

The full JSON decode of params, result or error happens at most once per
message, the first time a rule asks, and is shared by every rule.
"""

from __future__ import annotations

from functools import cached_property
from typing import Any

from inspector.analysis import Attempt, Conversation, Entry, Flow
from inspector.jsonrpc import Message, MessageDecoder
from rules.base import Finding, Severity


class MessageContext:
    def __init__(
        self,
        entry: Entry,
        flow: Flow,
        conversation: Conversation,
        decoder: MessageDecoder,
        era: str | None,
        version: str | None,
    ) -> None:
        self.entry = entry
        self.flow = flow
        self.conversation = conversation
        self.era = era  # the conversation's era (or the one --spec forces)
        self.version = version  # the protocol version in force (or forced)
        self._decoder = decoder

    @property
    def seq(self) -> int:
        return self.entry.seq

    @property
    def kind(self) -> str:
        return self.entry.kind

    @property
    def method(self) -> str | None:
        """The message's method; for a response, the method of the request it answers."""
        return self.entry.method if self.entry.method is not None else self.flow.method

    @property
    def is_response(self) -> bool:
        return self.entry.kind in ("result", "error")

    @cached_property
    def wire(self) -> bytes:
        """The message's exact bytes, encoded once for every rule that looks."""
        return self.entry.wire()

    @cached_property
    def message(self) -> Message:
        """The careful decode: exact ``Raw`` members; a batch member is found by its id."""
        whole = self._decoder.decode(self.wire)
        if whole.kind != "batch":
            return whole
        for item in whole.items:
            if (
                item.kind == self.entry.kind
                and item.id == self.entry.id
                and item.method == self.entry.method
            ):
                return item
        return whole

    @cached_property
    def obj(self) -> Any:
        """The whole message as a JSON value (``None`` if it is not JSON)."""
        from msgspec import DecodeError, json

        try:
            return json.decode(self.wire)
        except DecodeError:
            return None

    @cached_property
    def params(self) -> Any:
        return self.message.params_value()

    @cached_property
    def result(self) -> Any:
        return self.message.result_value()

    @cached_property
    def error(self) -> Any:
        return self.message.error_value()

    @property
    def meta(self) -> dict[str, Any] | None:
        """``params._meta`` (requests, notifications) or ``result._meta`` (results)."""
        holder = self.result if self.entry.kind == "result" else self.params
        meta = holder.get("_meta") if isinstance(holder, dict) else None
        return meta if isinstance(meta, dict) else None

    @cached_property
    def attempt(self) -> Attempt | None:
        """For a request or a response: the attempt of the flow it belongs to."""
        for attempt in reversed(self.flow.attempts):
            if (
                attempt.request is self.entry
                or attempt.response is self.entry
                or self.entry in attempt.duplicates
            ):
                return attempt
        return None

    @property
    def request(self) -> Entry | None:
        """For a response: the request it answers."""
        attempt = self.attempt
        return attempt.request if attempt is not None and self.is_response else None

    def finding(
        self,
        message: str,
        *,
        also: list[int] | tuple[int, ...] = (),
        severity: Severity | None = None,
    ) -> Finding:
        """A finding on this message; ``also`` lists related messages (they come first)."""
        return Finding(msgs=[*also, self.entry.seq], message=message, severity=severity)
