"""``replay_flow``: one recorded flow sent again to a live server, behind a guard.

An assistant that may start any command is an assistant that may run
anything. So by default ``replay_flow`` runs only what the capture itself
recorded: the stdio server's command line, or the HTTP upstream's URL.
Another command or URL needs the user to have started ``mcpeek mcp
--allow-run``; the refusal says so.

The replay itself is the core's
:func:`~mcpeek.inspector.replay.rerun.replay_flows` (what ``mcpeek replay
--flow N`` and the viewer's re-run use): the flow, every round of it, after
the handshake its conversation made, compared with the recording.
"""

from __future__ import annotations

from typing import Any

from mcpeek.inspector.assist.desk import AssistError
from mcpeek.inspector.assist.study import Study
from mcpeek.inspector.capture.reader import CaptureError
from mcpeek.inspector.capture.redact_rules import MARKER_PREFIX
from mcpeek.inspector.capture.redact_targets import PASSWORD
from mcpeek.inspector.records import Header
from mcpeek.inspector.replay.replay_select import SelectionError
from mcpeek.inspector.replay.replay_transport import ReplayError
from mcpeek.inspector.replay.rerun import ReplayTarget, replay_flows

TIMEOUT = 30.0  # seconds a live answer is waited for


def guarded_target(
    header: Header, command: list[str] | None, url: str | None, *, allow_run: bool
) -> ReplayTarget:
    """Which server to replay to: the recorded one unless the call names another, which
    only ``--allow-run`` permits. Raises :class:`AssistError` with why not."""
    if command and url:
        raise AssistError("give a command or a url, not both")
    recorded = (header.transport, header.target)
    if not command and not url:
        if not header.target:
            raise AssistError("the capture recorded no server to run: give a command or url")
        parts = [header.target] if isinstance(header.target, str) else header.target
        if any(PASSWORD in part or MARKER_PREFIX in part for part in parts):
            raise AssistError(
                "the server the capture recorded holds redacted credentials: give its "
                "command or url (which needs 'mcpeek mcp --allow-run')"
            )
        transport, target = recorded
    else:
        transport, target = ("stdio", list(command)) if command else ("http", str(url))
        if (transport, target) != recorded and not allow_run:
            shown = " ".join(target) if isinstance(target, list) else target
            raise AssistError(
                f"refused to run {shown!r}: replay_flow only runs the server the capture "
                "recorded unless the user started 'mcpeek mcp --allow-run'"
            )
    if transport == "http" and isinstance(target, str):
        return ReplayTarget(url=target)
    return ReplayTarget(command=list(target))


class Rerunner:
    def __init__(self, *, allow_run: bool, timeout: float = TIMEOUT) -> None:
        self.allow_run = allow_run
        self.timeout = timeout

    def replay(
        self, name: str, found: Study, number: int, command: list[str] | None, url: str | None
    ) -> dict[str, Any]:
        """Replay flow ``number``; runs its own event loop (call it from a worker thread)."""
        header = found.model.header
        if header is None:
            raise AssistError(f"{name} has no header")
        target = guarded_target(header, command, url, allow_run=self.allow_run)
        try:
            outcome = replay_flows(found.path, [number], target, timeout=self.timeout)
        except (ReplayError, SelectionError) as exc:
            raise AssistError(str(exc)) from None
        except (CaptureError, OSError) as exc:
            raise AssistError(f"{name} cannot be read: {exc}") from None
        (report,) = outcome.reports
        return {
            "capture": name,
            "server": target.name,
            "transport": target.transport,
            "report": report.to_json(),
            "notes": outcome.notes,
        }
