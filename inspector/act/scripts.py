"""User scripts (``-s script.py``): hooks called for each message, in the spirit of
mitmproxy's addons.

A script is a Python file defining ``on_message(msg, flow)``, plain or
``async``. ``msg`` is a :class:`~mcpeek.inspector.act.verdicts.Message`;
``flow`` the flow it belongs to so far (``flow.method``, ``flow.number``,
``flow.sender``…, the viewer's :class:`~mcpeek.inspector.analysis.Flow`). It
returns ``None`` (pass the message on unchanged), ``Edit(message)``,
``Drop()`` or ``Reply(result=...)``/``Reply(error=...)``, importable from
``mcpeek.inspector.act``. Several ``-s`` run in order; the first verdict wins.

Loading is checked up front (a missing file, a syntax error, an import that
fails, no ``on_message``: :class:`ScriptError`, one line). At run time, a
hook that raises or returns something else is reported once per script and
the message passes unchanged.
"""

from __future__ import annotations

import importlib.util
import inspect
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mcpeek.inspector.act.verdicts import Drop, Edit, Reply

VERDICTS = (Edit, Drop, Reply)


class ScriptError(ValueError):
    """A script that cannot be loaded; ``str()`` is the one line to show."""


class Script:
    """One loaded script and its ``on_message`` hook."""

    def __init__(self, path: Path, hook: Callable[..., Any]) -> None:
        self.path = path
        self.hook = hook
        self.failed = False  # told once: a broken hook is not reported per message

    async def call(self, message: Any, flow: Any, report: Callable[[str], None]) -> Any:
        """The hook's verdict, or ``None`` when it raised or answered nonsense."""
        try:
            verdict = self.hook(message, flow)
            if inspect.isawaitable(verdict):
                verdict = await verdict
        except Exception as exc:
            self._fail(report, f"raised {type(exc).__name__}: {exc}")
            return None
        if verdict is None or isinstance(verdict, VERDICTS):
            return verdict
        self._fail(report, f"returned {type(verdict).__name__}, not None, Edit, Drop or Reply")
        return None

    def _fail(self, report: Callable[[str], None], what: str) -> None:
        if not self.failed:
            self.failed = True
            report(f"script {self.path}: on_message {what}; messages pass unchanged")


def load_script(path: Path) -> Script:
    """Run the file as a module of its own and find its ``on_message``."""
    where = f"-s {path}"
    if not path.is_file():
        raise ScriptError(f"{where}: no such file")
    name = f"mcpeek_script_{abs(hash(str(path.resolve())))}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ScriptError(f"{where}: not a Python file")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses and pickling look a module up by name
    try:
        spec.loader.exec_module(module)
    except SyntaxError as exc:
        raise ScriptError(f"{where}: syntax error at line {exc.lineno}: {exc.msg}") from None
    except (Exception, SystemExit) as exc:  # whatever the file does, the user gets one line
        raise ScriptError(f"{where}: failed to load: {type(exc).__name__}: {exc}") from None
    hook = getattr(module, "on_message", None)
    if not callable(hook):
        raise ScriptError(f"{where}: defines no on_message(msg, flow) function")
    return Script(path, hook)
