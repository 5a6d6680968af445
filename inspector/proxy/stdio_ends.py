"""The asyncio protocols at the four ends of the stdio relay: each passes what happens
on its pipe to the :class:`~mcpeek.inspector.proxy.stdio.StdioRelay`, nothing more."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from mcpeek.inspector.proxy.stdio import StdioRelay


class Writable(Protocol):
    def write(self, data: bytes) -> None: ...
    def close(self) -> None: ...
    def is_closing(self) -> bool: ...


class ServerSide(asyncio.SubprocessProtocol):
    """The server's three pipes and its exit."""

    def __init__(self, relay: StdioRelay) -> None:
        self.relay = relay

    def pipe_data_received(self, fd: int, data: bytes | str) -> None:
        assert isinstance(data, bytes)
        if fd == 1:
            self.relay.from_server(data)
        else:
            self.relay.from_server_stderr(data)

    def pipe_connection_lost(self, fd: int, exc: Exception | None) -> None:
        self.relay.server_pipe_closed(fd)

    def process_exited(self) -> None:
        self.relay.server_exited()

    # The server's stdin pipe filled up (or drained): slow the client down.
    def pause_writing(self) -> None:
        self.relay.pause(self.relay.client_in)

    def resume_writing(self) -> None:
        self.relay.resume(self.relay.client_in)


class ClientIn(asyncio.Protocol):
    """mcpeek's stdin: what the client sends, and its EOF."""

    def __init__(self, relay: StdioRelay) -> None:
        self.relay = relay

    def data_received(self, data: bytes) -> None:
        self.relay.from_client(data)

    def eof_received(self) -> bool:
        self.relay.client_eof()
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        self.relay.client_eof()


class ClientOut(asyncio.Protocol):
    """mcpeek's stdout: back-pressure from the client, and its going away."""

    def __init__(self, relay: StdioRelay) -> None:
        self.relay = relay
        self.closed = asyncio.get_running_loop().create_future()

    # The client stopped reading our stdout: stop reading the server's.
    def pause_writing(self) -> None:
        self.relay.pause(self.relay.server_out)

    def resume_writing(self) -> None:
        self.relay.resume(self.relay.server_out)

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.closed.done():
            self.closed.set_result(None)
        self.relay.client_out_lost()
