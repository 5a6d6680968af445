"""The replay driver: send a plan's steps to a live server and collect its answers.

:class:`Replayer` walks a :class:`~mcpeek.inspector.replay.replay_plan.ReplayPlan`
step by step over a transport (stdio or Streamable HTTP; tests use a fake
one). It gives every request a new id of its own, waits for the live
response when the plan says so (``--timeout`` seconds at most), and:

- sends a multi round-trip retry only when the live server asked for input
  again, with the ``requestState`` the live server issued (a server that now
  answers at once ends the chain: the retry is not sent);
- rewrites a client ``notifications/cancelled`` to the live id;
- answers a request from the live server (legacy ``elicitation/create``,
  ``sampling/createMessage``, ``roots/list``, ``ping``) with what the recorded
  client answered to the same request; leaves it unanswered when the recorded
  client left it unanswered; else answers a JSON-RPC error (``ping``, which
  has one right answer, gets ``{}``);
- counts the live progress notifications of each flow (by progress token);
- ends a request's wait at once when the transport says it failed (an HTTP
  error status) or the server went away, and keeps why
  (:class:`~mcpeek.inspector.replay.replay_result.LiveAttempt`).

The result is one :class:`~mcpeek.inspector.replay.replay_result.LiveFlow` per
recorded client flow; comparing it with the recording is
:mod:`mcpeek.inspector.replay.replay_report`'s job. What a transport must do is
:class:`~mcpeek.inspector.replay.replay_transport.Transport`.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
from collections.abc import Callable
from typing import Any

import msgspec

from mcpeek.inspector.replay.per_kind import PerKind
from mcpeek.inspector.replay.replay_ids import (
    UNSET,
    IdAllocator,
    remap_cancel,
    retry_message,
    with_id,
)
from mcpeek.inspector.replay.replay_plan import ClientStep, HttpStep, ReplayPlan, too_deep
from mcpeek.inspector.replay.replay_result import LiveAttempt, LiveFlow
from mcpeek.inspector.replay.replay_transport import Outgoing, ReplayError, Transport

NO_ANSWER_CODE = -32601


class Replayer:
    def __init__(
        self,
        plan: ReplayPlan,
        transport: Transport,
        *,
        timeout: float = 10.0,
        on_note: Callable[[str], None] | None = None,
    ) -> None:
        self.plan = plan
        self.transport = transport
        self.timeout = timeout
        self.on_note = on_note or (lambda _text: None)
        self.ids = IdAllocator()
        self.flows = {f.number: LiveFlow(f) for f in [*plan.support, *plan.flows]}
        self.answered = 0  # live responses received
        self.closed_reason: str | None = None
        self._pending: dict[int, tuple[LiveFlow, LiveAttempt, asyncio.Future[None]]] = {}
        self._progress: dict[str, LiveFlow] = {}
        self._current: LiveFlow | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._decoder = msgspec.json.Decoder()
        # Notes a flooding server would cause per line: a few per kind, the rest counted.
        self._noted = PerKind()

    async def run(self) -> list[LiveFlow]:
        await self.transport.start(self._deliver, self._closed)
        try:
            for step in self.plan.steps:
                if self.closed_reason is not None:
                    break
                if isinstance(step, HttpStep):
                    await self._transmit(Outgoing(None, "http", step.method, step=step))
                else:
                    await self._step(step)
            await self._wait_all()
        finally:
            for task in list(self._tasks):
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(task, self.timeout)
            await self.transport.close()
            for kind, more in self._noted.unsaid():
                self.on_note(f"{kind} {more} more time{'s' if more != 1 else ''} (not noted each)")
        return [self.flows[f.number] for f in self.plan.flows]

    def _note(self, kind: str, what: object) -> None:
        if self._noted.admit(kind):
            self.on_note(f"{kind}: {what!r}")

    # -- sending ------------------------------------------------------------------
    async def _step(self, step: ClientStep) -> None:
        if step.kind == "notification":
            message = step.message
            if step.method == "notifications/cancelled":
                message = remap_cancel(message, self.ids)
            await self._send(message, "notification", step)
            return
        live = self.flows.get(step.flow.number) if step.flow is not None else None
        if live is None:
            return
        if step.attempt > 0:
            previous = live.attempts[-1] if live.attempts else None
            if live.stopped or previous is None:
                return
            if previous.response is None:  # its own problem says why: nothing to retry
                live.stopped = True
                return
            result = previous.response.get("result") if previous.response else None
            if not (isinstance(result, dict) and result.get("resultType") == "input_required"):
                live.stopped = True
                live.problems.append(
                    f"the live server answered attempt {step.attempt} without asking for input"
                    " (recorded: input_required), so the recorded retry was not sent"
                )
                return
            live_id = self.ids.allocate(step.message.get("id"))
            message = retry_message(step.message, live_id, result.get("requestState", UNSET))
        else:
            live_id = self.ids.allocate(step.message.get("id"))
            message = with_id(step.message, live_id)
        attempt = LiveAttempt(step.attempt, live_id, message)
        live.attempts.append(attempt)
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._pending[live_id] = (live, attempt, future)
        token = _progress_token(message)
        if token is not None:
            self._progress[token] = live
        self._current = live
        await self._send(message, "request", step, lambda problem: self._failed(live_id, problem))
        if step.wait:
            await self._wait(live_id)

    async def _send(
        self,
        message: dict[str, Any],
        kind: str,
        step: ClientStep | None,
        failed: Callable[[str], bool] | None = None,
    ) -> None:
        data = msgspec.json.encode(message)
        name = step.name if step is not None else None
        await self._transmit(Outgoing(data, kind, message.get("method"), name, step, failed))

    async def _transmit(self, item: Outgoing) -> None:
        """Send ``item``; a transport that raises anything but :class:`ReplayError` (the
        server cannot be reached: the replay stops) fails this item, not the replay."""
        try:
            await self.transport.send(item)
        except ReplayError:
            raise
        except Exception as exc:
            what = " ".join(filter(None, (item.method, item.name))) or f"a {item.kind}"
            problem = f"could not be sent ({type(exc).__name__}: {exc})"
            if item.failed is None or not item.failed(problem):
                self.on_note(f"{what} {problem}")

    def _failed(self, live_id: int, problem: str) -> bool:
        """The request's exchange failed: no response will come, stop waiting for it."""
        entry = self._pending.get(live_id)
        if entry is None or entry[1].response is not None or entry[1].problem is not None:
            return False
        entry[1].problem = problem
        if not entry[2].done():
            entry[2].set_result(None)
        return True

    async def _wait(self, live_id: int) -> None:
        entry = self._pending.get(live_id)
        if entry is None:
            return
        # asyncio.wait, not wait_for: Python 3.11's wait_for loses a cancellation (Ctrl-C)
        # that comes as the answer does, and the replay would go on to its end.
        done, _ = await asyncio.wait({entry[2]}, timeout=self.timeout)
        if not done:
            entry[1].timed_out = True

    async def _wait_all(self) -> None:
        waiting = {
            future: attempt
            for flow, attempt, future in self._pending.values()
            if attempt.response is None
            and attempt.problem is None
            and not attempt.timed_out
            and flow.recorded.attempts[attempt.index].response is not None
        }
        if waiting and self.closed_reason is None:
            _done, late = await asyncio.wait(waiting, timeout=self.timeout)
            for future in late:
                waiting[future].timed_out = True

    # -- receiving ----------------------------------------------------------------
    def _closed(self, reason: str) -> None:
        if self.closed_reason is None:
            self.closed_reason = reason
        for _flow, attempt, future in self._pending.values():
            if attempt.response is None and attempt.problem is None and not attempt.timed_out:
                attempt.cut = True
            if not future.done():
                future.set_result(None)

    def _deliver(self, data: bytes) -> None:
        try:
            value = self._decoder.decode(data)
        except msgspec.DecodeError:
            self._note("the live server sent something that is not JSON", data[:80])
            return
        except RecursionError:
            deep = True
        else:
            deep = too_deep(data, value)
        if deep:
            self._note("the live server sent JSON nested too deeply to read", data[:80])
            return
        for message in value if isinstance(value, list) else [value]:
            if isinstance(message, dict):
                self._message(message)

    def _message(self, message: dict[str, Any]) -> None:
        method = message.get("method")
        if isinstance(method, str) and "id" in message:
            task = asyncio.get_running_loop().create_task(self._answer(message))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
        elif isinstance(method, str):
            if method == "notifications/progress":
                params = message.get("params")
                token = _token_key(params.get("progressToken")) if isinstance(params, dict) else ""
                flow = self._progress.get(token)
                if flow is not None:
                    flow.progress += 1
        elif "result" in message or "error" in message:
            live_id = message.get("id")
            entry = self._pending.get(live_id) if type(live_id) is int else None
            if entry is None or entry[1].response is not None:
                self._note("the live server answered an unknown id", message.get("id"))
                return
            self.answered += 1
            entry[1].response = message
            if not entry[2].done():
                entry[2].set_result(None)

    async def _answer(self, request: dict[str, Any]) -> None:
        method = request.get("method")
        recorded = self.plan.recorded_request(
            method if isinstance(method, str) else None, request.get("params")
        )
        owner = self._current
        if recorded is not None and recorded.answer is None:
            # The recorded client never answered it either: neither does replay.
            if owner is not None:
                owner.notes.append(
                    f"the live server sent {method}; not answered, as in the recording"
                )
            return
        answer = copy.deepcopy(recorded.answer) if recorded is not None else None
        if answer is None and method == "ping":
            answer = {"result": {}}  # the one right answer, recorded or not
        elif answer is None:
            answer = {
                "error": {
                    "code": NO_ANSWER_CODE,
                    "message": f"mcpeek replay: the recording has no answer to {method}",
                }
            }
            if owner is not None:
                owner.problems.append(
                    f"the live server sent {method}, which the recording never did"
                )
        elif owner is not None:
            owner.notes.append(f"the live server sent {method}; answered as recorded")
        response = {"jsonrpc": "2.0", "id": request.get("id"), **answer}
        try:
            await self._transmit(Outgoing(msgspec.json.encode(response), "response"))
        except ReplayError as exc:  # nobody awaits this task: the problem is said here
            if owner is not None:
                owner.problems.append(f"the answer to the live server's {method} failed: {exc}")


def _token_key(token: Any) -> str:
    return f"{type(token).__name__}:{token!r}"


def _progress_token(message: dict[str, Any]) -> str | None:
    params = message.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    if isinstance(meta, dict) and "progressToken" in meta:
        return _token_key(meta["progressToken"])
    return None
