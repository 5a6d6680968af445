"""The options that make a proxy act on traffic, shared by ``stdio`` and ``http``.

``--fault`` (repeatable), ``--faults FILE``, ``--seed`` and ``-s SCRIPT``
(repeatable). Everything is checked before the proxy starts: a bad rule or
script is a usage error (exit 2, one line). Without any of them there is no
actor and the relay runs its plain fast path.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from mcpeek.inspector.capture.files import kind_of
from mcpeek.inspector.cli.base import UsageError

if TYPE_CHECKING:
    from mcpeek.inspector.act.actor import Actor

T = TypeVar("T")


def add_action_options(parser: argparse.ArgumentParser) -> None:
    add = parser.add_argument
    add(
        "--intercept",
        action="append",
        default=[],
        metavar="FILTER",
        help="hold the messages FILTER matches until released through the control socket "
        "CAPTURE.ctl (forward, edit, drop, answer; repeatable; see docs/intercept.md)",
    )
    add(
        "--control",
        action="store_true",
        help="open the control channel (CAPTURE.ctl) without holding anything: the viewer "
        "can inject messages; --intercept opens it too",
    )
    add(
        "--fault",
        action="append",
        default=[],
        metavar="'FILTER => ACTION'",
        help='act on the messages FILTER matches: delay 500ms, drop, error CODE "message", '
        "reply @answer.json, reply-recorded CAPTURE, disconnect or corrupt, each with "
        "optional times=N and p=0.1 (repeatable; see docs/intercept.md)",
    )
    add("--faults", type=Path, metavar="FILE", help="fault rules from a TOML file ([[fault]])")
    add(
        "--seed",
        type=int,
        metavar="N",
        help="seed of the p= draws (the same traffic gets the same faults)",
    )
    add(
        "-s",
        "--script",
        action="append",
        default=[],
        type=Path,
        metavar="SCRIPT",
        help="a Python file whose on_message(msg, flow) may edit, drop or answer messages "
        "(repeatable)",
    )


def build_actor(args: argparse.Namespace, report: Callable[[str], None]) -> Actor | None:
    """The :class:`~mcpeek.inspector.act.actor.Actor` the options ask for, or ``None``
    (nothing to act on: the act package is not even imported)."""
    if not (args.fault or args.faults or args.script or args.intercept or args.control):
        if args.seed is not None:
            raise UsageError("--seed does nothing without --fault or --faults")
        return None
    from mcpeek.inspector.act.actor import Actor
    from mcpeek.inspector.act.faults import FaultError, load_faults, parse_fault
    from mcpeek.inspector.act.scripts import ScriptError, load_script
    from mcpeek.inspector.filters import FilterError, compile_filter

    intercepts = []
    for text in args.intercept:
        try:
            intercepts.append(compile_filter(text))
        except FilterError as exc:
            raise UsageError(f"--intercept {text!r}: bad filter: {exc}") from None

    for option, path in [("--faults", args.faults), *(("-s", p) for p in args.script)]:
        if path is not None:
            _a_file(option, path)
    try:
        rules = [parse_fault(text) for text in args.fault]
        if args.faults is not None:
            rules.extend(load_faults(args.faults))
        scripts = [load_script(path) for path in args.script]
    except (FaultError, ScriptError) as exc:
        raise UsageError(str(exc)) from None
    actor = Actor(rules, scripts, seed=args.seed, report=report, intercepts=intercepts)
    actor.controlled = bool(intercepts or args.control)
    return actor


def _a_file(option: str, path: Path) -> None:
    """A UsageError when ``path`` is there but is no regular file: opening a FIFO to read
    it would wait for a writer for ever, and a directory is no "such file" to be told of."""
    try:
        kind = kind_of(os.stat(path).st_mode)
    except OSError:
        return  # (missing, unreadable: the loader says so, as it always has)
    if kind is not None:
        raise UsageError(f"{option} {path}: is {kind}, not a file")


def with_control(
    run: Callable[[], Awaitable[T]], actor: Actor | None, capture: Path, say: Callable[[str], None]
) -> Callable[[], Awaitable[T]]:
    """``run``, with the control channel of the held messages open while it runs
    (only when ``--intercept`` asked for holding)."""
    if actor is None or not actor.controlled:
        return run
    from mcpeek.inspector.act.control import ControlServer, control_path

    path = control_path(capture)

    async def controlled() -> T:
        async with ControlServer(path, actor.holds, actor.injector, actor.set_intercept):
            say(f"control channel (hold, release, inject): {path}")
            return await run()

    return controlled
