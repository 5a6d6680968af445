"""``replay_flow``: one recorded flow sent again to a live server, behind a guard.

An assistant that may start any command is an assistant that may run
anything. So by default ``replay_flow`` runs only what the capture itself
recorded: the stdio server's command line, or the HTTP upstream's URL.
Another command or URL needs the user to have started ``mcpeek mcp
--allow-run``; the refusal says so.

The replay is ``mcpeek replay``'s machinery (plan, replayer, comparison),
with the plan cut down to the era's opening (``initialize`` and
``notifications/initialized``, or ``server/discover``) and the steps of the
one flow, every round of it: the server sees the same conversation opening,
then that call.
"""

from __future__ import annotations

from typing import Any

from mcpeek import inspector
from mcpeek.inspector.capture.reader import CaptureError
from mcpeek.inspector.records import Header
from mcpeek.inspector.replay.credentials import CredentialPolicy, recorded_origin
from mcpeek.inspector.replay.replay import Replayer, ReplayError
from mcpeek.inspector.replay.replay_http import HttpTransport
from mcpeek.inspector.replay.replay_plan import ClientStep, ReplayPlan, Step, build_plan
from mcpeek.inspector.replay.replay_report import compare_flow
from mcpeek.inspector.replay.replay_stdio import StdioTransport
from mcpeek.inspector.replay.tape import Tape

from .desk import AssistError
from .study import Study

#: The messages that open a conversation: sent before the flow, as they were recorded.
OPENING = frozenset({"initialize", "notifications/initialized", "server/discover"})
TIMEOUT = 30.0  # seconds a live answer is waited for


def recorded_target(header: Header) -> tuple[str, list[str] | str]:
    """The transport and the server (command line or URL) a capture recorded."""
    return header.transport, header.target


def guarded_target(
    header: Header, command: list[str] | None, url: str | None, *, allow_run: bool
) -> tuple[str, list[str] | str]:
    """Which server to replay to: the recorded one unless the call names another, which
    only ``--allow-run`` permits. Raises :class:`AssistError` with why not."""
    if command and url:
        raise AssistError("give a command or a url, not both")
    transport, target = recorded_target(header)
    if not command and not url:
        if not target:
            raise AssistError("the capture recorded no server to run: give a command or url")
        return transport, target
    wanted: list[str] | str = list(command) if command else str(url)
    wanted_transport = "stdio" if command else "http"
    if (wanted_transport, wanted) == (transport, target) or allow_run:
        return wanted_transport, wanted
    shown = " ".join(wanted) if isinstance(wanted, list) else wanted
    raise AssistError(
        f"refused to run {shown!r}: replay_flow only runs the server the capture recorded "
        "unless the user started 'mcpeek mcp --allow-run'"
    )


def one_flow_plan(plan: ReplayPlan, number: int) -> ReplayPlan:
    """``plan`` cut down to the conversation's opening and flow ``number``."""
    steps: list[Step] = [
        step
        for step in plan.steps
        if isinstance(step, ClientStep)
        and (
            (step.flow is not None and step.flow.number == number)
            or (step.method in OPENING and (step.flow is None or step.flow.number < number))
        )
    ]
    for step in steps:
        assert isinstance(step, ClientStep)
        step.wait = True  # one call alone: each answer is awaited before the next step
    flows = [f for f in plan.flows if f.number == number]
    return ReplayPlan(steps, flows, plan.server_requests, plan.era, plan.transport, plan.notes)


class Rerunner:
    def __init__(self, *, allow_run: bool, timeout: float = TIMEOUT) -> None:
        self.allow_run = allow_run
        self.timeout = timeout

    async def replay(
        self, name: str, found: Study, number: int, command: list[str] | None, url: str | None
    ) -> dict[str, Any]:
        header = found.model.header
        if header is None:
            raise AssistError(f"{name} has no header")
        transport_name, target = guarded_target(header, command, url, allow_run=self.allow_run)
        try:
            capture = inspector.load(found.path)
        except (CaptureError, OSError) as exc:
            raise AssistError(f"{name} cannot be read: {exc}") from None
        plan = one_flow_plan(build_plan(capture.records, capture.flows, header.transport), number)
        if not plan.flows:
            raise AssistError(
                f"flow {number} of {name} is not a request the client sent: only those replay"
            )
        notes: list[str] = list(plan.notes)
        tape = Tape(transport_name, target)
        transport: HttpTransport | StdioTransport
        if isinstance(target, str):
            transport = HttpTransport(
                target,
                tape.emit,
                timeout=self.timeout,
                on_note=notes.append,
                credentials=CredentialPolicy(
                    recorded_origin(header.transport, header.target), target, send_anyway=False
                ),
            )
        else:
            transport = StdioTransport(target, tape.emit)
        replayer = Replayer(plan, transport, timeout=self.timeout, on_note=notes.append)
        try:
            live = await replayer.run()
        except ReplayError as exc:
            raise AssistError(str(exc)) from None
        finally:
            tape.close()
        report = compare_flow(live[0], (), self.timeout, replayer.closed_reason)
        return {
            "capture": name,
            "server": target,
            "transport": transport_name,
            "report": report.to_json(),
            "notes": notes,
        }
