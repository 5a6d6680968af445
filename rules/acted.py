"""Which findings concern what mcpeek did to the traffic (``--fault``, ``-s``, ``--intercept``).

The rules judge what each peer received. When the offending message is one
mcpeek made (``msg.made``: an edit, an answer in place, a corruption), or
answers a request whose answer mcpeek dropped or corrupted (an ``act``
record, matched by JSON-RPC id and direction), the finding is marked with
how mcpeek acted, and no peer is blamed for it.
"""

from __future__ import annotations

from typing import Any

import msgspec

from mcpeek.inspector.analysis import Entry
from mcpeek.inspector.records import Act, Msg, Record, wire_bytes


class _Id(msgspec.Struct):
    id: Any = msgspec.UNSET


_decode_id = msgspec.json.Decoder(_Id).decode
_encode = msgspec.json.encode
OTHER = {"c2s": "s2c", "s2c": "c2s"}


class ActedMessages:
    """Remembers the messages mcpeek made and the ids of those it acted on."""

    def __init__(self) -> None:
        self._made: dict[int, str] = {}  # seq of a made message -> how
        self._answers: dict[tuple[str, bytes], str] = {}  # (dir, id) of an answer acted on
        #: anything noted yet (an attribute: the engine asks on every finding, and most
        #: captures hold nothing mcpeek did)
        self.any = False

    def __bool__(self) -> bool:
        return self.any

    def note(self, record: Record) -> None:
        if type(record) is Msg:
            if record.made is not None:
                self._made[record.seq] = record.made
                self.any = True
        elif type(record) is Act and record.action in ("drop", "corrupt", "disconnect"):
            try:
                rid = _decode_id(wire_bytes(record)).id
            except (msgspec.MsgspecError, RecursionError):
                return
            if rid is not msgspec.UNSET:
                self._answers[(record.dir, _encode(rid))] = record.action
                self.any = True

    def made(self, seq: int, entry: Entry | None) -> str | None:
        """How mcpeek made the message ``seq`` (``entry``, when known) or the answer it
        waited for; ``None`` when the finding is the peers' own."""
        how = self._made.get(seq)
        if how is not None or entry is None or not self._answers:
            return how
        if entry.kind != "request" or entry.id is msgspec.UNSET:
            return None
        try:
            key = (OTHER.get(entry.dir, ""), _encode(entry.id))
        except (TypeError, msgspec.EncodeError):
            return None
        return self._answers.get(key)
