"""One way to run a capture through the analysis: read (or follow) a file, feed, finish.

Every reader of captures that correlates them (``lint``, ``show``, ``demo``,
``inspector.load``, the pytest plugin, the live checks, the viewer) goes
through :func:`run_capture`, so that what the header is, when following stops
and when the analysis ends are decided in one place:

* the reader yields the header first (:meth:`CaptureReader.stream`);
* following a capture stops at the proxy's ``exit`` event (``until_exit``) or
  when ``stop()`` says so, and the analysis's clock ticks while it waits, so
  that a request left unanswered is reported live;
* the analysis is finished at the end, and also when the user interrupts
  (Ctrl-C): what was read is judged. A capture that cannot be read raises
  :class:`CaptureError` unfinished, for the caller to report;
* ``cancelled()``, asked before each record, abandons the run unfinished (a
  viewer being quit, a proxy that will not wait): a long file must not keep
  its reader busy once nobody wants the result.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Protocol

from mcpeek.inspector.capture.polling import Polling
from mcpeek.inspector.capture.reader import CaptureReader
from mcpeek.inspector.records import AnyRecord, Event, Header, Record


class Analysis(Protocol):
    """An :class:`~mcpeek.inspector.analysis.Analyzer`, or a wrapper of one."""

    def feed(self, record: Record) -> None: ...

    def finish(self) -> None: ...

    def tick(self, now: float) -> None: ...


def run_capture(
    reader: CaptureReader,
    analysis: Analysis,
    *,
    follow: bool = False,
    until_exit: bool = True,
    stop: Callable[[], bool] | None = None,
    poll_interval: float | Polling = 0.05,
    each: Callable[[AnyRecord], None] | None = None,
    cancelled: Callable[[], bool] | None = None,
) -> bool:
    """Feed ``analysis`` the header and every record of ``reader``'s capture, then finish it.

    ``follow`` keeps reading as the capture grows, until its ``exit`` event
    (with ``until_exit``) or until ``stop()`` returns true. ``each`` sees every
    record (not the header) before the analysis does. Returns ``False`` when
    ``cancelled()`` said so, before a record or while following: the analysis is
    then left unfinished.
    """
    ended = False
    gave_up = False

    def stop_following() -> bool:
        nonlocal gave_up
        if cancelled is not None and cancelled():
            gave_up = True
            return True
        if not ended:
            analysis.tick(time.time())
        return ended or (stop is not None and stop())

    records = reader.stream(follow=follow, stop=stop_following, poll_interval=poll_interval)
    try:
        for record in records:
            if cancelled is not None and cancelled():
                return False
            if type(record) is not Header:
                if each is not None:
                    each(record)
                if until_exit and type(record) is Event and record.event == "exit":
                    ended = True
            analysis.feed(record)
    except KeyboardInterrupt:
        analysis.finish()
        raise
    finally:
        records.close()  # the file now, not whenever the generator is collected
    if gave_up:
        return False
    analysis.finish()
    return True
