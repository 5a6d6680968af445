"""Stopping a replay by a signal: Ctrl-C (SIGINT) or SIGTERM, at any moment of its run.

``mcpeek replay`` runs its session under :func:`run_stoppable`: the first
signal cancels the session, which closes its transport (the live server is
stopped as at any end), and the signal is remembered even when the session
ended on its own meanwhile (a terminal's Ctrl-C reaches a stdio server too,
which may exit first): the replay is then *interrupted*, never reported as a
server that went away. :class:`ReplayInterrupted` says so, with what became of
the replay's capture.
"""

from __future__ import annotations

import asyncio
import signal
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)
SIGNAL_NAMES: dict[int, str] = {signal.SIGINT: "Ctrl-C", signal.SIGTERM: "SIGTERM"}


class ReplayInterrupted(Exception):
    """The replay was stopped before its end; ``str()`` is one line for the user and
    ``exit_code`` the shell's code for the signal (130 for Ctrl-C)."""

    def __init__(self, signum: int, capture: str = "") -> None:
        self.signum = signum
        self.exit_code = 128 + signum
        said = f"replay interrupted ({SIGNAL_NAMES.get(signum, f'signal {signum}')})"
        super().__init__(f"{said}; {capture}" if capture else said)


async def run_stoppable(session: Coroutine[Any, Any, T]) -> tuple[T | None, int | None]:
    """Run ``session``; a SIGINT or SIGTERM cancels it. Its result (None when it was
    cancelled) and the first signal met (None when there was none). Outside the
    main thread, signals cannot be caught: the session runs as it is."""
    if threading.current_thread() is not threading.main_thread():
        return await session, None
    loop = asyncio.get_running_loop()
    task = asyncio.ensure_future(session)
    met: list[int] = []

    def stop(signum: int) -> None:
        met.append(signum)
        # A second signal cancels again: it hurries the session's own clean-up along, or
        # stops a session that lost the first cancellation on its way.
        task.cancel()

    for signum in STOP_SIGNALS:
        loop.add_signal_handler(signum, stop, signum)
    try:
        await asyncio.wait({task})
    finally:
        for signum in STOP_SIGNALS:
            loop.remove_signal_handler(signum)
    if not met:
        return task.result(), None  # (raises what the session raised)
    if not task.cancelled():
        task.exception()  # whatever the session met as it was stopped: it was stopped
    return None, met[0]
