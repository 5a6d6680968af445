"""Build capture records in tests, without sockets (like mitmproxy's ``tflow``).

    b = RecordBuilder()
    b.request("tools/call", {"name": "get_weather"}, id=1)
    b.notify("notifications/progress", {"progressToken": 1, "progress": 1})
    b.result(1, {"content": []})
    analyzer = analyze(b.records)

Every record gets the next ``seq`` and a time 1 ms after the previous one
(:meth:`wait` moves the clock). Requests default to the client side, answers
and notifications to the server side; ``modern=True`` adds the 2026-07-28
``_meta`` to client requests and ``resultType`` to results.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import msgspec

from mcpeek.inspector.capture.writer import CaptureWriter
from mcpeek.inspector.records import AnyRecord, Event, Header, Http, Msg, SeqRecord, Stderr

MODERN = "2026-07-28"
SERVER_INFO = "io.modelcontextprotocol/serverInfo"
START = 1_796_000_000.0


def modern_meta(**extra: Any) -> dict[str, Any]:
    meta: dict[str, Any] = {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "test-client", "version": "1.0"},
    }
    meta.update(extra)
    return meta


class RecordBuilder:
    def __init__(
        self, transport: str = "stdio", *, modern: bool = False, start: float = START
    ) -> None:
        self.header = Header(
            created="2026-11-30T00:00:00.000000Z",
            transport=transport,
            target=["test-server"],
            tool="mcpeek test",
        )
        self.records: list[AnyRecord] = [self.header]
        self.modern = modern
        self.t = start
        self._seq = 0
        self._next_id = 0

    @property
    def last(self) -> SeqRecord:
        record = self.records[-1]
        assert isinstance(record, SeqRecord)
        return record

    def save(self, path: str | os.PathLike[str]) -> Path:
        """Write the records as a capture file (``seq`` and ``t`` are kept)."""
        with CaptureWriter(
            path, transport=self.header.transport, target=self.header.target, force=True
        ) as writer:
            for record in self.records[1:]:
                assert isinstance(record, SeqRecord)
                writer.write(record)
        return Path(path)

    def wait(self, seconds: float) -> RecordBuilder:
        self.t += seconds
        return self

    def add(self, record: SeqRecord) -> SeqRecord:
        self._seq += 1
        self.t += 0.001
        record.seq = self._seq
        record.t = round(self.t, 6)
        self.records.append(record)  # type: ignore[arg-type]
        return record

    def raw(self, data: str | bytes, dir: str = "c2s", ch: str = "stdio") -> Msg:
        if isinstance(data, bytes):
            try:
                text: str | None = data.decode("utf-8")
                b64 = None
            except UnicodeDecodeError:
                import base64

                text, b64 = None, base64.b64encode(data).decode()
        else:
            text, b64 = data, None
        record = Msg(dir=dir, ch=ch, raw=text, raw_b64=b64)  # type: ignore[arg-type]
        self.add(record)
        return record

    def send(self, message: dict[str, Any], dir: str, ch: str = "stdio") -> Msg:
        return self.raw(msgspec.json.encode(message).decode(), dir, ch)

    def request(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        id: Any = None,
        dir: str = "c2s",
        ch: str = "stdio",
        meta: dict[str, Any] | None = None,
    ) -> Msg:
        if id is None:
            self._next_id += 1
            id = self._next_id
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": id, "method": method}
        body = dict(params or {})
        if meta is not None or (self.modern and dir == "c2s"):
            body["_meta"] = {**(modern_meta() if self.modern else {}), **(meta or {})}
        if body or params is not None:
            message["params"] = body
        return self.send(message, dir, ch)

    def notify(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        dir: str = "s2c",
        ch: str = "stdio",
    ) -> Msg:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        return self.send(message, dir, ch)

    def result(
        self, id: Any, result: dict[str, Any] | None = None, *, dir: str = "s2c", ch: str = "stdio"
    ) -> Msg:
        body = dict(result or {})
        if self.modern and "resultType" not in body:
            body["resultType"] = "complete"
        if self.modern and dir == "s2c":
            meta = body.setdefault("_meta", {})
            if isinstance(meta, dict):
                meta.setdefault(SERVER_INFO, {"name": "test-server", "version": "1.0"})
        return self.send({"jsonrpc": "2.0", "id": id, "result": body}, dir, ch)

    def error(
        self,
        id: Any,
        code: int = -32603,
        message: str = "failed",
        *,
        data: Any = None,
        dir: str = "s2c",
        ch: str = "stdio",
    ) -> Msg:
        error: dict[str, Any] = {"code": code, "message": message}
        if data is not None:
            error["data"] = data
        return self.send({"jsonrpc": "2.0", "id": id, "error": error}, dir, ch)

    def input_required(
        self,
        id: Any,
        *,
        state: str | None = None,
        requests: dict[str, Any] | None = None,
        ch: str = "stdio",
    ) -> Msg:
        body: dict[str, Any] = {"resultType": "input_required"}
        if requests is not None:
            body["inputRequests"] = requests
        if state is not None:
            body["requestState"] = state
        return self.send({"jsonrpc": "2.0", "id": id, "result": body}, "s2c", ch)

    def event(self, name: str, **fields: Any) -> Event:
        record = Event(event=name, **fields)
        self.add(record)
        return record

    def stderr(self, text: str) -> Stderr:
        record = Stderr(raw=text)
        self.add(record)
        return record

    def http(self, x: str, phase: str, **fields: Any) -> Http:
        record = Http(x=x, phase=phase, **fields)  # type: ignore[arg-type]
        self.add(record)
        return record
