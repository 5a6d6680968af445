"""A replay stopped by SIGINT or SIGTERM: the session is cancelled, and the signal is
what the caller hears, even when the session ended on its own meanwhile."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal

import pytest

from mcpeek.inspector.replay.stopping import ReplayInterrupted, run_stoppable


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_cancels_the_session(sig: signal.Signals) -> None:
    cancelled: list[bool] = []

    async def session() -> str:
        os.kill(os.getpid(), sig)
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            cancelled.append(True)  # its clean-up runs
            raise
        return "ended"

    assert asyncio.run(run_stoppable(session())) == (None, sig)
    assert cancelled == [True]
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # given back


def test_a_session_that_ends_anyway_was_still_interrupted() -> None:
    """A terminal's Ctrl-C reaches a stdio server too: it may end the session first (the
    server went away), or a cancellation may be lost; the replay is interrupted all the same."""

    async def session() -> str:
        os.kill(os.getpid(), signal.SIGINT)
        with contextlib.suppress(asyncio.CancelledError):  # (swallowed)
            await asyncio.sleep(3600)
        return "ended"

    assert asyncio.run(run_stoppable(session())) == (None, signal.SIGINT)


def test_without_a_signal_the_result_is_the_sessions() -> None:
    async def session() -> str:
        return "ended"

    assert asyncio.run(run_stoppable(session())) == ("ended", None)


def test_what_the_user_is_told() -> None:
    stopped = ReplayInterrupted(signal.SIGINT, "out.jsonl kept as it was")
    assert str(stopped) == "replay interrupted (Ctrl-C); out.jsonl kept as it was"
    assert stopped.exit_code == 130
    assert ReplayInterrupted(signal.SIGTERM).exit_code == 143
