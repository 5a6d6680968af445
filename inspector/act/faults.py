"""Fault rules: ``--fault 'FILTER => ACTION [times=N] [p=P]'`` and ``--faults FILE``.

A rule is the viewer's filter (applied to each message as it arrives, with
``~k`` for the message's own kind) and one action:

==========================  ============================================================
``delay 500ms``             forward it later (``ms`` or ``s``; a bare number is seconds)
``drop``                    forward nothing
``error CODE "message"``    answer a request in place with that error (the server never
                            sees it); replace a response with it
``reply @answer.json``      answer a request in place (replace a response) with the
                            file's ``result`` or ``error``
``reply-recorded CAPTURE``  answer a request in place with the capture's recorded answer
                            to the same request, matched as ``mcpeek serve`` matches
``disconnect``              cut the client off (HTTP: abort the response; stdio: close
                            the pipe to the client)
``corrupt``                 forward invalid JSON instead
==========================  ============================================================

``times=N`` lets a rule act N times at most; ``p=0.1`` acts on a tenth of the
matching messages, drawn from a generator seeded by ``--seed``. Parsing is
done once, up front: a bad rule is a :class:`FaultError` with one line to show.
"""

from __future__ import annotations

import json
import math
import os
import re
import shlex
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mcpeek.inspector.capture.files import kind_of
from mcpeek.inspector.filters import Filter, FilterError, compile_filter
from mcpeek.inspector.replay.mock import MockServer, MockSession

ARROW = "=>"
DURATION = re.compile(r"^(\d+(?:\.\d*)?|\.\d+)(ms|s)?$")
NO_ARGUMENT = frozenset({"drop", "disconnect", "corrupt"})
ACTIONS = ("delay", "drop", "error", "reply", "reply-recorded", "disconnect", "corrupt")
DEFAULT_ERROR = "fault injected by mcpeek"


class FaultError(ValueError):
    """A fault rule that cannot be used; ``str()`` is the one line to show."""


@dataclass
class Action:
    """One parsed action: its ``name`` and what it needs."""

    name: str
    seconds: float = 0.0  # delay
    code: int = 0  # error
    message: str = ""  # error
    body: dict[str, Any] | None = None  # reply: the response members to send
    recorded: MockServer | None = None  # reply-recorded
    _session: MockSession | None = field(default=None, repr=False)

    def recorded_session(self) -> MockSession:
        """One mock session for the whole run (its MRTR state and repeat counts)."""
        assert self.recorded is not None
        if self._session is None:
            self._session = self.recorded.session()
        return self._session


@dataclass
class FaultRule:
    """A filter, an action, and how often it may act."""

    text: str
    filter: Filter
    action: Action
    times: int | None = None
    probability: float | None = None
    fired: int = 0

    @property
    def spent(self) -> bool:
        return self.times is not None and self.fired >= self.times


def parse_fault(text: str, base: Path | None = None) -> FaultRule:
    """One ``FILTER => ACTION [times=N] [p=P]`` rule; ``base`` resolves relative files."""
    where = f"--fault {text!r}"
    left, arrow, right = text.partition(ARROW)
    if not arrow:
        raise FaultError(f"{where}: expected 'FILTER => ACTION', e.g. '~m tools/call => drop'")
    try:
        rule_filter = compile_filter(left.strip())
    except FilterError as exc:
        raise FaultError(f"{where}: bad filter: {exc}") from None
    try:
        words = shlex.split(right)
    except ValueError as exc:
        raise FaultError(f"{where}: {exc}") from None
    options = {}
    while words and "=" in words[-1] and words[-1].split("=", 1)[0] in ("times", "p"):
        name, _, value = words.pop().partition("=")
        options[name] = value
    if not words:
        raise FaultError(f"{where}: no action after =>; known: {' '.join(ACTIONS)}")
    action = _action(words[0], words[1:], where, base or Path.cwd())
    times = _times(options.get("times"), where)
    probability = _probability(options.get("p"), where)
    return FaultRule(text.strip(), rule_filter, action, times, probability)


def load_faults(path: Path) -> list[FaultRule]:
    """The rules of a TOML file: ``[[fault]]`` tables with ``match``, ``action``, and
    optional ``times`` and ``p``; files named in it are relative to it."""
    try:
        with path.open("rb") as file:
            data = tomllib.load(file)
    except OSError as exc:
        raise FaultError(f"--faults {path}: {exc.strerror or exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise FaultError(f"--faults {path}: not valid TOML: {exc}") from None
    except UnicodeDecodeError as exc:  # (tomllib decodes the bytes first, as UTF-8)
        raise FaultError(f"--faults {path}: not UTF-8 text (byte {exc.start})") from None
    tables = data.get("fault", [])
    unknown = sorted(set(data) - {"fault"})
    if unknown or not isinstance(tables, list):
        raise FaultError(f"--faults {path}: expected only [[fault]] tables, got {unknown}")
    rules = []
    for number, table in enumerate(tables, 1):
        extra = sorted(set(table) - {"match", "action", "times", "p"})
        match, action = table.get("match"), table.get("action")
        if extra or not isinstance(match, str) or not isinstance(action, str):
            raise FaultError(
                f"--faults {path}: fault {number}: wants match and action (text), "
                f"times and p" + (f"; unknown: {' '.join(extra)}" if extra else "")
            )
        text = f"{match} {ARROW} {action}"
        for name in ("times", "p"):
            if name in table:
                text += f" {name}={table[name]}"
        try:
            rules.append(parse_fault(text, path.parent))
        except FaultError as exc:
            raise FaultError(f"--faults {path}: fault {number}: {exc}") from None
    return rules


def _action(name: str, args: list[str], where: str, base: Path) -> Action:
    if name not in ACTIONS:
        raise FaultError(f"{where}: unknown action {name!r}; known: {' '.join(ACTIONS)}")
    if name in NO_ARGUMENT:
        if args:
            raise FaultError(f"{where}: {name} takes no argument, got {' '.join(args)!r}")
        return Action(name)
    if name == "delay":
        return Action(name, seconds=_duration(args, where))
    if name == "error":
        return _error(args, where)
    if len(args) != 1:
        wanted = "@FILE.json" if name == "reply" else "CAPTURE"
        raise FaultError(f"{where}: {name} wants one argument, {wanted}")
    if name == "reply":
        return Action(name, body=_reply_file(args[0], where, base))
    capture = base / args[0]
    try:
        return Action(name, recorded=MockServer.from_capture(capture, timing="fast"))
    except OSError as exc:
        raise FaultError(f"{where}: {capture}: {exc.strerror or exc}") from None
    except Exception as exc:  # CaptureError, ServeError: a message for the user
        raise FaultError(f"{where}: {capture}: {exc}") from None


def _duration(args: list[str], where: str) -> float:
    found = DURATION.match(args[0].strip().lower()) if len(args) == 1 else None
    if found is None:
        raise FaultError(f"{where}: delay wants one duration, e.g. 500ms or 2s")
    value = float(found.group(1))
    return value / 1000 if found.group(2) == "ms" else value


def _error(args: list[str], where: str) -> Action:
    if not args or len(args) > 2:
        raise FaultError(f'{where}: error wants CODE ["message"], e.g. error -32603 "boom"')
    try:
        code = int(args[0])
    except ValueError:
        raise FaultError(f"{where}: error code {args[0]!r} is not an integer") from None
    return Action("error", code=code, message=args[1] if len(args) == 2 else DEFAULT_ERROR)


def _reply_file(arg: str, where: str, base: Path) -> dict[str, Any]:
    if not arg.startswith("@"):
        raise FaultError(f"{where}: reply wants @FILE.json (a file holding the answer)")
    path = base / arg[1:]
    try:
        kind = kind_of(os.stat(path).st_mode)
        if kind is not None:  # a FIFO's read would wait for a writer for ever
            raise FaultError(f"{where}: {path}: is {kind}, not a file")
        data = json.loads(path.read_bytes())
    except OSError as exc:
        raise FaultError(f"{where}: {path}: {exc.strerror or exc}") from None
    except (ValueError, RecursionError) as exc:  # (UnicodeDecodeError is a ValueError)
        raise FaultError(f"{where}: {path}: not valid JSON: {exc}") from None
    if not isinstance(data, dict) or ("result" in data) == ("error" in data):
        raise FaultError(f"{where}: {path}: wants a JSON object with a result or an error")
    return {k: v for k, v in data.items() if k in ("result", "error")}


def _times(value: str | None, where: str) -> int | None:
    if value is None:
        return None
    if not value.isdigit() or int(value) < 1:
        raise FaultError(f"{where}: times={value}: expected a whole number, 1 or more")
    return int(value)


def _probability(value: str | None, where: str) -> float | None:
    if value is None:
        return None
    try:
        number = float(value)
    except ValueError:
        number = math.nan
    if not 0 < number <= 1:
        raise FaultError(f"{where}: p={value}: expected a probability in (0, 1]")
    return number
