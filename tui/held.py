"""The messages a proxy holds (``--intercept``), and the keys that release them.

Opened with ``H`` on a capture whose proxy holds messages: it talks to the
proxy's control channel (``CAPTURE.ctl``, see
:mod:`mcpeek.inspector.act.control`), from ``mcpeek http``'s own viewer or a
``mcpeek view`` in another terminal alike. Each held message shows with how
long it has been held; ``f`` forwards it, ``d`` drops it, ``e`` edits it and
``a`` answers a held request in place (an editor that refuses invalid JSON
and says where; ``ctrl+r`` fills in the recorded answers of earlier flows of
the same method, one after the other; ``ctrl+s`` sends, ``escape`` gives up); ``c`` and ``s``
write a new message to inject to the client or the server (a refusal, e.g. an
HTTP client with no stream open to carry it, shows under the editor).
"""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Label, OptionList, Static, TextArea

from mcpeek.inspector.act.control import control_request_async
from mcpeek.inspector.views.session import SessionModel
from mcpeek.tui.screens import PromptScreen

REFRESH = 0.5  # seconds between looks at what is held (and the timers)
ANSWER_TEMPLATE = '{"result": {}}'
#: What the editor starts with for a message injected to each peer.
INJECT_TEMPLATES = {
    "inject-client": '{"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}',
    "inject-server": '{"jsonrpc": "2.0", "id": 1, "method": "ping"}',
}


async def held_now(control: Path) -> list[dict[str, Any]]:
    """What the proxy of ``control`` holds now (nothing when no proxy is there)."""
    if not control.exists():
        return []
    try:
        answer = await control_request_async(control, {"op": "list"})
    except (OSError, ValueError):
        return []
    held: list[dict[str, Any]] = answer.get("held", [])
    return held


def mark_held(model: SessionModel, held: list[dict[str, Any]]) -> bool:
    """Mark the flows whose answer is held (``FlowItem.held``: for how long), clear the
    others; whether a row changed. A held request has no flow yet: the H screen shows it."""
    answers: dict[str, float] = {}
    for message in held:
        if message["kind"] in ("result", "error"):
            with contextlib.suppress(ValueError, TypeError, AttributeError):
                answers[json.dumps(json.loads(message["raw"]).get("id"))] = message["held_s"]
    changed = False
    for item in reversed(model.items):
        if item.held is None and (not answers or item.flow.response is not None):
            continue  # (an answered flow waits for nothing)
        seconds = next((answers[k] for k in map(json.dumps, item.flow.ids) if k in answers), None)
        if seconds != item.held:
            item.held = seconds
            item.version += 1
            changed = True
    return changed


def recorded_answers(model: SessionModel, method: str | None) -> list[str]:
    """The ``result``/``error`` of each answered flow of ``method`` in the capture, the
    latest first, as JSON text for the answer editor."""
    answers = []
    for item in reversed(model.items):
        response = item.flow.response
        if item.flow.method != method or response is None:
            continue
        try:
            message = json.loads(response.wire())
        except ValueError:
            continue
        if isinstance(message, dict):
            members = {k: message[k] for k in ("result", "error") if k in message}
            if members:
                answers.append(json.dumps(members, indent=2, ensure_ascii=False))
    return answers


class HeldScreen(ModalScreen[None]):
    BINDINGS = [
        Binding("escape", "back", "Back"),
        Binding("f", "release('forward')", "Forward"),
        Binding("d", "release('drop')", "Drop"),
        Binding("e", "edit('edit')", "Edit"),
        Binding("a", "edit('answer')", "Answer"),
        Binding("c", "edit('inject-client')", "Inject → client"),
        Binding("s", "edit('inject-server')", "Inject → server"),
        Binding("i", "intercept", "Intercept filter"),
        Binding("ctrl+r", "recorded", "Recorded answer"),
        Binding("ctrl+s", "send", "Send"),
    ]
    DEFAULT_CSS = """
    HeldScreen { align: center middle; }
    HeldScreen > Vertical { width: 90%; height: 90%; border: thick $warning; background: $surface; }
    HeldScreen OptionList { height: 8; }
    HeldScreen TextArea { height: 1fr; display: none; }
    HeldScreen #held-error { color: $error; }
    """

    def __init__(self, control: Path, model: SessionModel | None = None) -> None:
        super().__init__()
        self.control = control
        self.model = model  # the capture's flows: their answers can answer a held request
        self._picked = -1  # which recorded answer ctrl+r showed last
        self.held: list[dict[str, Any]] = []
        self.editing: str | None = None  # "edit" or "answer" while the editor is open

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label("held messages", id="held-title")
            yield OptionList(id="held-list")
            yield Static("", id="held-raw")
            yield TextArea("", language="json", id="held-editor")
            yield Static("", id="held-error")
            yield Label(
                Text(
                    "f forward  d drop  e edit  a answer  c inject → client  "
                    "s inject → server  i intercept filter  ctrl+s send  esc back"
                )
            )

    async def on_mount(self) -> None:
        await self.refresh_held()
        self.set_interval(REFRESH, self.refresh_held)

    async def refresh_held(self) -> None:
        try:
            answer = await control_request_async(self.control, {"op": "list"})
        except (OSError, ValueError) as exc:
            self.query_one("#held-error", Static).update(f"the proxy is gone: {exc}")
            return
        self.held = answer.get("held", [])
        listing = self.query_one("#held-list", OptionList)
        keep = listing.highlighted
        listing.clear_options()
        listing.add_options(
            f"#{h['id']}  {'→' if h['dir'] == 'c2s' else '←'} {h['method'] or h['kind']}  "
            f"held {h['held_s']:.1f} s"
            for h in self.held
        )
        if self.held:
            listing.highlighted = min(keep or 0, len(self.held) - 1)
        self.query_one("#held-title", Label).update(f"{len(self.held)} held")
        current = self.current
        shown = current["raw"] if current else ""
        if current and current["ch"] == "stdio":  # one ordered byte stream per direction
            shown += "\n\n(stdio: the later messages of this direction wait behind it)"
        self.query_one("#held-raw", Static).update(shown)

    @property
    def current(self) -> dict[str, Any] | None:
        index = self.query_one("#held-list", OptionList).highlighted
        return self.held[index] if index is not None and index < len(self.held) else None

    async def action_release(self, action: str) -> None:
        if self.editing is None and self.current is not None:
            await self._send({"op": action, "id": self.current["id"]})

    def action_edit(self, action: str) -> None:
        current = self.current
        injecting = action in INJECT_TEMPLATES
        if (current is None and not injecting) or self.editing is not None:
            return
        self.editing = action
        editor = self.query_one("#held-editor", TextArea)
        if injecting:
            editor.text = INJECT_TEMPLATES[action]
        else:
            assert current is not None
            editor.text = current["raw"] if action == "edit" else ANSWER_TEMPLATE
        editor.display = True
        editor.focus()

    def action_recorded(self) -> None:
        """While answering: the next recorded answer of an earlier flow of the same method."""
        current = self.current
        if self.editing != "answer" or current is None or self.model is None:
            return
        answers = recorded_answers(self.model, current["method"])
        error = self.query_one("#held-error", Static)
        if not answers:
            error.update(f"no recorded answer to {current['method']} in this capture")
            return
        self._picked = (self._picked + 1) % len(answers)
        self.query_one("#held-editor", TextArea).text = answers[self._picked]
        error.update(f"recorded answer {self._picked + 1} of {len(answers)} (ctrl+r: the next)")

    async def action_send(self) -> None:
        injecting = self.editing in INJECT_TEMPLATES
        if self.editing is None or (self.current is None and not injecting):
            return
        text = self.query_one("#held-editor", TextArea).text
        try:
            json.loads(text)
        except json.JSONDecodeError as exc:  # refused here, the message stays held
            where = f"line {exc.lineno} column {exc.colno}"
            self.query_one("#held-error", Static).update(f"not valid JSON: {exc.msg} at {where}")
            return
        if injecting:
            request = {"op": "inject", "to": self.editing.split("-")[1], "raw": text}
        else:
            assert self.current is not None
            request = {"op": self.editing, "id": self.current["id"], "raw": text}
        if await self._send(request):
            self._close_editor()

    def action_intercept(self) -> None:
        """Set (or, left empty, clear) the proxy's intercept filter, live."""

        async def chosen(text: str | None) -> None:
            if text is not None:
                await self._send({"op": "intercept", "filter": text})

        self.app.push_screen(PromptScreen("hold what this filter matches (empty: nothing)"), chosen)

    def action_back(self) -> None:
        if self.editing is not None:
            self._close_editor()
        else:
            self.dismiss(None)

    def _close_editor(self) -> None:
        self.editing = None
        self.query_one("#held-editor", TextArea).display = False
        self.query_one("#held-list", OptionList).focus()

    async def _send(self, request: dict[str, Any]) -> bool:
        answer = await control_request_async(self.control, request)
        error = "" if answer.get("ok") else str(answer.get("error", "refused"))
        self.query_one("#held-error", Static).update(error)
        await self.refresh_held()
        return not error
