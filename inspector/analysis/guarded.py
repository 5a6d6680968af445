"""An Analyzer fed where one record's bug must not end the checks (live sessions).

Rules that raise are already contained by the rule engine; what is left is a
bug in correlation itself, or in another listener. Where checks run beside
traffic (mcpeek's live worker, ``serve``'s client checks), such a bug is told
once on stderr and the next records are checked as usual: stopping would
silently leave the rest of the session unchecked. A closed pipe is no bug:
it ends the caller's output and passes through.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

from mcpeek.inspector.analysis.analyzer import Analyzer
from mcpeek.inspector.records import Record


class GuardedAnalyzer:
    def __init__(self, analyzer: Analyzer, what: str, advice: str = "they go on") -> None:
        self.analyzer = analyzer
        self._what = what  # "the live checks": how the message names them
        self._advice = advice
        self._told = False

    def feed(self, record: Record) -> None:
        # (as _guarded, inline: this runs on every record of a session)
        try:
            self.analyzer.feed(record)
        except BrokenPipeError:
            raise
        except Exception as exc:
            self._tell(exc)

    def tick(self, now: float) -> None:
        self._guarded(self.analyzer.tick, now)

    def finish(self) -> None:
        self._guarded(self.analyzer.finish)

    def _guarded(self, call: Callable[..., None], *args: Any) -> None:
        try:
            call(*args)
        except BrokenPipeError:
            raise
        except Exception as exc:
            self._tell(exc)

    def _tell(self, exc: Exception) -> None:
        if not self._told:
            self._told = True
            print(
                f"mcpeek: internal error in {self._what} ({type(exc).__name__}: {exc}); "
                f"{self._advice}",
                file=sys.stderr,
            )
