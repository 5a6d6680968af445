"""Playing a recorded call's steps to one live client, sans-IO.

:class:`~mcpeek.inspector.replay.mock.MockSession` decides *which* recorded
call answers a live message; a :class:`Playback` turns that call's steps into
:class:`Outgoing` messages: the recorded bytes, with the live request id,
progress token and subscription id spliced in, each after its recorded delay
(none with ``fast`` timing). A server request the recording waited on
(``await``) pauses the rest of the steps until the live client answers it.
"""

from __future__ import annotations

import msgspec

from mcpeek.inspector.replay.canonical import canonical
from mcpeek.inspector.replay.rawjson import replace_member
from mcpeek.inspector.replay.script import Step

SUBSCRIPTION_ID = ("params", "_meta", "io.modelcontextprotocol/subscriptionId")


class Outgoing(msgspec.Struct, gc=False):
    """One message to send ``delay`` seconds after the previous one of its reaction.

    ``stream`` is the live request id (as the client wrote it) whose reply this
    is part of, ``None`` for a message of no request; ``final`` marks that
    request's response (its HTTP stream can close after it).
    """

    data: bytes
    delay: float = 0.0
    stream: bytes | None = None
    final: bool = False


class _Paused(msgspec.Struct):
    stream: bytes
    steps: list[Step]
    token: bytes | None
    sent_ids: dict[bytes, bytes]


class Playback:
    """The steps of one session's calls, played; the pauses wait for the client's answers."""

    def __init__(self, *, fast: bool) -> None:
        self.fast = fast
        self._waiting: dict[bytes, _Paused] = {}
        self._server_ids: set[bytes] = set()
        self._next_server_id = 1_000_000

    def play(
        self,
        steps: list[Step],
        stream: bytes | None,
        token: bytes | None,
        out: list[Outgoing],
        sent_ids: dict[bytes, bytes] | None = None,
    ) -> None:
        """Append to ``out`` what ``steps`` send for the live request ``stream``
        (``None``: no request) until the end or a step that awaits an answer."""
        if sent_ids is None:
            sent_ids = {}  # the ids this run's server requests went out with
        carry = 0.0  # the delay of skipped steps still counts
        for i, step in enumerate(steps):
            delay = 0.0 if self.fast else carry + step.delay
            carry = 0.0
            if step.kind == "await":
                sent = sent_ids.get(id_key(step.server_id))
                if sent is not None:
                    rest = steps[i + 1 :]
                    self._waiting[sent] = _Paused(stream or b"null", rest, token, sent_ids)
                    return
                continue
            data = step.data
            if step.kind == "response":
                rewritten = replace_member(data, ("id",), stream or b"null")
                out.append(Outgoing(rewritten or data, delay, stream, final=True))
                continue
            if step.kind == "request":
                data = self._server_request(data, step.server_id, sent_ids)
            elif step.progress:
                if token is None:  # the live client asked for no progress
                    carry = step.delay
                    continue
                data = replace_member(data, ("params", "progressToken"), token) or data
            if step.subscription and stream is not None:
                data = replace_member(data, SUBSCRIPTION_ID, stream) or data
            out.append(Outgoing(data, delay, stream))

    def answered(self, raw_id: bytes, out: list[Outgoing]) -> bool:
        """The client answered the server request ``raw_id``: play what waited for it.
        False when nothing did (an answer to no request of this session)."""
        paused = self._waiting.pop(id_key(raw_id), None)
        if paused is None:
            return False
        self.play(paused.steps, paused.stream, paused.token, out, paused.sent_ids)
        return True

    def _server_request(
        self, data: bytes, recorded: bytes | None, sent: dict[bytes, bytes]
    ) -> bytes:
        """A server request keeps its recorded id unless this session used it already."""
        key = id_key(recorded)
        if key in self._server_ids:
            self._next_server_id += 1
            fresh = str(self._next_server_id).encode()
            data = replace_member(data, ("id",), fresh) or data
            key = id_key(fresh)
        self._server_ids.add(key)
        sent[id_key(recorded)] = key
        return data


def id_key(raw: bytes | None) -> bytes:
    """Ids compare as JSON values (``1`` and ``"1"`` differ, spacing does not)."""
    if raw is None:
        return b"null"
    try:
        return canonical(msgspec.json.decode(raw))
    except (msgspec.DecodeError, RecursionError):
        return raw
