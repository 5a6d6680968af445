"""The stdio wrapper's lifecycle, sans I/O: tables of events and the commands they give.

Each case is a playbook (after mitmproxy's): a list of steps, each an event
fed to a fresh :class:`StdioLifecycle` with a grace of 1 s, and the commands
it must answer with. Times are the lifecycle's clock, in seconds.
"""

from __future__ import annotations

import signal
from typing import Any

import pytest

from mcpeek.inspector.proxy.lifecycle import (
    STDERR,
    STDOUT,
    CloseClientStdout,
    CloseServerPipe,
    CloseServerStdin,
    Command,
    Note,
    SignalServer,
    StdioLifecycle,
    exit_code,
)

Step = tuple[str, tuple[Any, ...], list[Command]]
TERM = [Note("sending SIGTERM to the server"), SignalServer(signal.SIGTERM)]
KILL = [Note("sending SIGKILL to the server"), SignalServer(signal.SIGKILL)]
BOTH_PIPES_CLOSED: list[Step] = [
    ("server_pipe_closed", (STDOUT,), [CloseClientStdout()]),
    ("server_pipe_closed", (STDERR,), []),
]

PLAYBOOKS: dict[str, list[Step]] = {
    "a server that exits on its own: nothing to do": [
        ("server_exited", (0.0,), []),
        *BOTH_PIPES_CLOSED,
    ],
    "the client's EOF, then SIGTERM after the grace, SIGKILL after another": [
        ("client_eof", (0.0,), [CloseServerStdin()]),
        ("tick", (0.5,), []),
        ("tick", (1.0,), TERM),
        ("tick", (1.5,), []),
        ("tick", (2.0,), KILL),
        ("tick", (9.0,), []),
    ],
    "a server that exits within the grace gets no signal": [
        ("client_eof", (0.0,), [CloseServerStdin()]),
        ("tick", (0.5,), []),
        ("server_exited", (0.6,), []),
        *BOTH_PIPES_CLOSED,
        ("tick", (5.0,), []),
    ],
    "the client's EOF after the exit: no escalation": [
        ("server_exited", (0.0,), []),
        ("client_eof", (0.1,), [CloseServerStdin()]),
        *BOTH_PIPES_CLOSED,
        ("tick", (5.0,), []),
    ],
    "time a live client takes to read does not use up the grace": [
        ("client_eof", (0.0,), [CloseServerStdin()]),
        ("stdout_paused", (True, 0.5), []),
        ("tick", (0.9,), []),
        ("tick", (5.0,), []),  # held up by the client: 0.5 s used
        ("stdout_paused", (False, 5.0), []),
        ("tick", (5.4,), []),
        ("tick", (5.5,), TERM),
    ],
    "a pause left set by a client that went away does not hold the grace": [
        ("client_eof", (0.0,), [CloseServerStdin()]),
        ("stdout_paused", (True, 0.0), []),
        (
            "client_stdout_lost",
            (),
            [Note("the client closed mcpeek's stdout"), CloseServerPipe(STDOUT)],
        ),
        ("server_pipe_closed", (STDOUT,), [CloseClientStdout()]),
        ("tick", (1.0,), TERM),
    ],
    "the client's stderr gone: the server's stderr is closed, once": [
        (
            "client_stderr_lost",
            (),
            [Note("the client closed mcpeek's stderr"), CloseServerPipe(STDERR)],
        ),
        ("server_pipe_closed", (STDERR,), []),
        ("client_stderr_lost", (), []),
    ],
    "a pipe closes once: the client's stdout is closed once": [
        ("server_pipe_closed", (STDOUT,), [CloseClientStdout()]),
        ("server_pipe_closed", (STDOUT,), []),
    ],
    "after the exit, pipes a grandchild holds are given up once idle": [
        ("server_activity", (0.0,), []),
        ("server_exited", (1.0,), []),
        ("tick", (2.9,), []),  # the idle clock starts at the exit, not before
        ("tick", (3.1,), [CloseServerPipe(STDOUT), CloseServerPipe(STDERR)]),
        *BOTH_PIPES_CLOSED,
        ("tick", (9.0,), []),
    ],
    "output after the exit keeps the pipes open": [
        ("server_exited", (0.0,), []),
        ("server_activity", (1.5,), []),
        ("tick", (3.0,), []),
        ("tick", (3.6,), [CloseServerPipe(STDOUT), CloseServerPipe(STDERR)]),
    ],
    "a live client slow to read keeps the pipes open; once it is gone they are given up": [
        ("stdout_paused", (True, 0.0), []),
        ("server_exited", (0.0,), []),
        ("tick", (60.0,), []),
        (
            "client_stdout_lost",
            (),
            [Note("the client closed mcpeek's stdout"), CloseServerPipe(STDOUT)],
        ),
        ("server_pipe_closed", (STDOUT,), [CloseClientStdout()]),
        ("tick", (60.1,), [CloseServerPipe(STDERR)]),
    ],
    "a signal is forwarded, with a note": [
        (
            "signal_received",
            (signal.SIGINT,),
            [Note("forwarding SIGINT to the server"), SignalServer(signal.SIGINT)],
        ),
    ],
}


@pytest.mark.parametrize("name", list(PLAYBOOKS))
def test_playbook(name: str) -> None:
    lifecycle = StdioLifecycle(grace=1.0)
    for number, (event, args, expected) in enumerate(PLAYBOOKS[name], 1):
        answer = getattr(lifecycle, event)(*args)
        assert (answer or []) == expected, f"step {number}: {event}{args}"


def test_done_once_the_server_exited_and_its_pipes_ended() -> None:
    lifecycle = StdioLifecycle(grace=1.0)
    lifecycle.server_pipe_closed(STDOUT)
    lifecycle.server_pipe_closed(STDERR)
    assert not lifecycle.done  # pipes closed, the process still runs
    lifecycle.server_exited(0.0)
    assert lifecycle.done


@pytest.mark.parametrize(("returncode", "code"), [(0, 0), (7, 7), (-9, 137), (-15, 143)])
def test_exit_code_is_the_servers_or_128_plus_its_signal(returncode: int, code: int) -> None:
    assert exit_code(returncode) == code
