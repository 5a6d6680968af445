"""The control channel of a proxy that holds messages (``--intercept``).

A Unix socket next to the capture (``CAPTURE.ctl``), created with mode 0600
in a directory that is the user's: loopback by nature, private to the user,
nothing listens on the network. One JSON object per line each way::

    {"op": "list"}                              -> {"ok": true, "held": [{"id", "dir", "ch",
                                                    "kind", "method", "held_s", "raw"}, ...]}
    {"op": "forward", "id": 1}                  -> {"ok": true}
    {"op": "edit", "id": 1, "raw": "{...}"}     -> {"ok": true}, or
                                                   {"ok": false, "error": "the edit is not valid
                                                    JSON: Expecting value at line 1 column 9"}
    {"op": "drop", "id": 1}
    {"op": "answer", "id": 1, "raw": "{\\"result\\": {...}}"}
    {"op": "inject", "to": "server", "raw": "{...}"} -> {"ok": true, "id": "mcpeek-1" | null}
    {"op": "intercept", "filter": "~m tools/call"}  -> {"ok": true} (a bad filter: refused;
                                                    "" holds nothing from now on)

:func:`control_request` is the client side, for tools and tests.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import socket
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mcpeek.inspector.act.hold import HoldError, Holds
from mcpeek.inspector.act.inject import Injector

SUFFIX = ".ctl"
LINE_LIMIT = 64 * 1024 * 1024  # an edit may be a big message


def control_path(capture: Path) -> Path:
    return capture.with_name(capture.name + SUFFIX)


class ControlServer:
    """Serves the held messages of ``holds`` on ``path`` while in its ``async with``."""

    def __init__(
        self,
        path: Path,
        holds: Holds,
        injector: Injector | None = None,
        intercepts: Callable[[str], None] | None = None,
    ) -> None:
        self.path = path
        self.holds = holds
        self.injector = injector
        self.intercepts = intercepts  # sets (or, given "", clears) the intercept filter
        self._server: asyncio.AbstractServer | None = None

    async def __aenter__(self) -> ControlServer:
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()  # a socket left by a proxy that was killed
        old = os.umask(0o177)  # never a moment with the socket open to others
        try:
            self._server = await asyncio.start_unix_server(
                self._serve, path=str(self.path), limit=LINE_LIMIT
            )
        finally:
            os.umask(old)
        os.chmod(self.path, 0o600)
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while line := await reader.readline():
                writer.write(json.dumps(self.answer(line)).encode() + b"\n")
                await writer.drain()
        except (ConnectionError, asyncio.LimitOverrunError, ValueError):
            pass
        finally:
            writer.close()

    def answer(self, line: bytes) -> dict[str, Any]:
        """One request line, answered (never raises)."""
        try:
            request = json.loads(line)
            if not isinstance(request, dict):
                raise HoldError("a request is a JSON object with an op")
            op = request.get("op")
            if op == "list":
                return {"ok": True, "held": self.holds.listing()}
            if op == "intercept":
                if self.intercepts is None:
                    raise HoldError("this proxy cannot change its intercept filter")
                self.intercepts(str(request.get("filter") or ""))
                return {"ok": True}
            if op == "inject":
                if self.injector is None:
                    raise HoldError("this proxy cannot inject")
                given = self.injector.inject(str(request.get("to")), request.get("raw"))
                return {"ok": True, "id": given}
            number = request.get("id")
            if not isinstance(number, int):
                raise HoldError(f"{op!r} wants the id of a held message")
            self.holds.release(number, str(op), request.get("raw"))
        except (HoldError, json.JSONDecodeError) as exc:
            return {"ok": False, "error": str(exc)}
        return {"ok": True}


def control_request(path: Path, request: dict[str, Any], timeout: float = 10.0) -> dict[str, Any]:
    """Send one request to a proxy's control channel and return its answer."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(timeout)
        sock.connect(str(path))
        sock.sendall(json.dumps(request).encode() + b"\n")
        data = b""
        while not data.endswith(b"\n"):
            chunk = sock.recv(65536)
            if not chunk:
                break
            data += chunk
    answer: dict[str, Any] = json.loads(data)
    return answer


async def control_request_async(path: Path, request: dict[str, Any]) -> dict[str, Any]:
    """:func:`control_request` for a caller on an event loop (the viewer, which may
    share its loop with the very proxy it talks to)."""
    reader, writer = await asyncio.open_unix_connection(str(path), limit=LINE_LIMIT)
    try:
        writer.write(json.dumps(request).encode() + b"\n")
        await writer.drain()
        answer: dict[str, Any] = json.loads(await reader.readline())
    finally:
        writer.close()
    return answer
