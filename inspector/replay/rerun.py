"""One replay session, start to end, and re-running chosen flows of a capture.

:func:`run_plan` is what ``mcpeek replay`` does with a plan: open the
transport (spawn a stdio server or reach an HTTP one), let the
:class:`~mcpeek.inspector.replay.replay.Replayer` send the plan through a
:class:`~mcpeek.inspector.replay.tape.Tape` (the replay's own capture, and
the checks the caller passes as listeners: the core never imports the rules),
and compare each live flow with its recording
(:func:`~mcpeek.inspector.replay.replay_report.compare_flow`).

:func:`replay_flows` is the API for re-running a few flows of a capture
file (the viewer's re-run key, the MCP server's ``replay_flow`` tool;
``mcpeek replay --flow`` runs the same two steps,
:func:`~mcpeek.inspector.replay.replay_select.select_flows` then :func:`run_plan`)::

    outcome = replay_flows("cap.jsonl", [5], ReplayTarget(command=["python", "server.py"]))
    outcome.same                      # every selected flow answered as recorded
    for report in outcome.reports:    # one FlowReport per selected flow
        print(report.number, report.same, [d.path for d in report.differences])

It runs an event loop of its own (``asyncio.run``): from async code (an MCP
tool handler), call it in a thread, ``await asyncio.to_thread(replay_flows, ...)``,
as the viewer does from its worker thread. It raises
:class:`~mcpeek.inspector.replay.replay.ReplayError` when the
server cannot be started or reached or went away before answering anything,
:class:`~mcpeek.inspector.replay.replay_select.SelectionError` for a flow
that is no client request, and ``CaptureError`` for a capture that cannot be
read; each ``str()`` is one line for the user.
"""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from mcpeek.inspector.analysis import AnalysisListener
from mcpeek.inspector.capture.writer import CaptureWriter
from mcpeek.inspector.loaded import load
from mcpeek.inspector.replay.canonical import Pointer
from mcpeek.inspector.replay.credentials import CredentialPolicy, recorded_origin
from mcpeek.inspector.replay.replay import Replayer
from mcpeek.inspector.replay.replay_http import HttpTransport
from mcpeek.inspector.replay.replay_plan import ReplayPlan, build_plan
from mcpeek.inspector.replay.replay_report import FlowReport, compare_flow
from mcpeek.inspector.replay.replay_result import LiveFlow
from mcpeek.inspector.replay.replay_select import select_flows
from mcpeek.inspector.replay.replay_stdio import StdioTransport
from mcpeek.inspector.replay.replay_transport import ReplayError
from mcpeek.inspector.replay.stopping import ReplayInterrupted, run_stoppable
from mcpeek.inspector.replay.tape import Tape

DEFAULT_TIMEOUT = 10.0


@dataclass
class ReplayTarget:
    """The live server: a stdio ``command`` to spawn, or a Streamable HTTP ``url``."""

    command: list[str] | None = None
    url: str | None = None
    headers: list[tuple[str, str]] = field(default_factory=list)  # sent with every request
    send_credentials: bool = False  # the recorded credentials even to another origin

    def __post_init__(self) -> None:
        if bool(self.command) == bool(self.url):
            raise ValueError("a ReplayTarget needs a command or a url, not both")

    @property
    def transport(self) -> str:
        return "http" if self.url else "stdio"

    @property
    def name(self) -> list[str] | str:
        """What a capture header's ``target`` holds for it."""
        return self.url or list(self.command or ())


@dataclass
class ReplayOutcome:
    reports: list[FlowReport]  # one per compared flow, in plan order
    live: list[LiveFlow]  # what the live server answered, the same flows in the same order
    notes: list[str]  # what the user should know that is no difference
    tape: Tape  # the live session's records: .direction() tells a violation's side
    closed: str | None = None  # how the live server went away mid-replay, if it did
    capture: Path | None = None  # where the live session was written, if it was

    @property
    def same(self) -> bool:
        return all(report.same for report in self.reports)


def run_plan(
    plan: ReplayPlan,
    target: ReplayTarget,
    *,
    timeout: float = DEFAULT_TIMEOUT,
    ignore: Sequence[Pointer] = (),
    writer: CaptureWriter | None = None,
    listeners: Sequence[AnalysisListener] = (),
    origin: str | None = None,
    stop_signals: bool = False,
) -> ReplayOutcome:
    """Replay ``plan`` to ``target`` (``origin``: where the capture was recorded, for
    the credential policy) and compare; runs its own event loop. The writer is closed
    at the end, and discarded when the server was never reached. With
    ``stop_signals`` (the CLI, in its main thread), SIGINT and SIGTERM stop the
    replay with :class:`ReplayInterrupted`; otherwise Ctrl-C is a KeyboardInterrupt.
    Either way, a replay stopped before its end leaves an old capture that the
    writer was to replace (``--force``) as it was."""
    notes = list(plan.notes)
    # The run has started once the live server said something: a replay that never
    # reached it leaves no capture; an old one that --force was to replace is
    # replaced only by a replay that ran to its end.
    tape = Tape(
        target.transport,
        target.name,
        writer=writer,
        listeners=listeners,
        started_by="s2c",
        replace_at_start=False,
    )
    transport = _transport(target, tape, timeout, notes.append, origin)
    replayer = Replayer(plan, transport, timeout=timeout, on_note=notes.append)
    try:
        if stop_signals:
            ran, signum = asyncio.run(run_stoppable(replayer.run()))
            if signum is not None:
                raise ReplayInterrupted(signum, tape.abandon())
            assert ran is not None  # (None only when stopped)
            live = ran
        else:
            live = asyncio.run(replayer.run())
    except ReplayError:
        tape.discard()  # the server was never reached: nothing worth a capture
        raise
    except ReplayInterrupted:
        raise
    except KeyboardInterrupt:  # (before or after the loop ran, under stop_signals)
        said = tape.abandon()
        if stop_signals:
            raise ReplayInterrupted(signal.SIGINT, said) from None
        raise
    except BaseException:
        tape.discard()
        raise
    if replayer.closed_reason is not None and replayer.answered == 0:
        tape.discard()
        raise ReplayError(
            went_away(transport, replayer.closed_reason, " before answering anything")
        )
    tape.close()
    closed: str | None = None
    if replayer.closed_reason is not None:
        closed = went_away(transport, replayer.closed_reason)
        notes.append(f"{closed} during the replay")
    for flow in plan.support:  # not compared, but a failed handshake explains the rest
        support = compare_flow(replayer.flows[flow.number], (), timeout, closed)
        notes += [f"the handshake, flow {flow.number} {flow.method}: {p}" for p in support.problems]
    reports = [compare_flow(flow, ignore, timeout, closed) for flow in live]
    path = writer.path if writer is not None else None
    return ReplayOutcome(reports, live, notes, tape, closed, path)


def replay_flows(
    capture: str | Path,
    flows: Sequence[int] | None,
    target: ReplayTarget,
    *,
    timeout: float = DEFAULT_TIMEOUT,
    ignore: Sequence[Pointer] = (),
    write: Path | None = None,
    listeners: Sequence[AnalysisListener] = (),
) -> ReplayOutcome:
    """Re-send the flows numbered ``flows`` of the capture file ``capture`` (None: all of
    them), with the handshake they need, to ``target``, and compare the live answers
    with the recorded ones. ``write``: a new file for the live session's capture (never
    the capture replayed; refused with ``CaptureFileError`` if it holds data)."""
    loaded = load(capture)
    plan = build_plan(loaded.records, loaded.flows, loaded.header.transport)
    if flows is not None:
        plan = select_flows(plan, flows, loaded.flows)
    writer = None
    if write is not None:
        if write.resolve() == Path(capture).resolve():
            raise ValueError(f"{write}: the replay cannot be written into the capture it replays")
        writer = CaptureWriter(write, transport=target.transport, target=target.name)
    origin = recorded_origin(loaded.header.transport, loaded.header.target)
    return run_plan(
        plan,
        target,
        timeout=timeout,
        ignore=ignore,
        writer=writer,
        listeners=listeners,
        origin=origin,
    )


def _transport(
    target: ReplayTarget,
    tape: Tape,
    timeout: float,
    on_note: Callable[[str], None],
    origin: str | None,
) -> HttpTransport | StdioTransport:
    if target.url:
        return HttpTransport(
            target.url,
            tape.emit,
            extra_headers=target.headers,
            timeout=timeout,
            on_note=on_note,
            credentials=CredentialPolicy(origin, target.url, send_anyway=target.send_credentials),
        )
    return StdioTransport(target.command or [], tape.emit)


def went_away(transport: object, reason: str, when: str = "") -> str:
    """How the live server went away mid-replay (a stdio server: how it exited)."""
    if isinstance(transport, StdioTransport):
        return transport.describe_exit(when)
    return f"{reason}{when}"
