"""The options that make a proxy act on traffic, shared by ``stdio`` and ``http``.

``--fault`` (repeatable), ``--faults FILE``, ``--seed`` and ``-s SCRIPT``
(repeatable). Everything is checked before the proxy starts: a bad rule or
script is a usage error (exit 2, one line). Without any of them there is no
actor and the relay runs its plain fast path.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from mcpeek.inspector.cli.base import UsageError

if TYPE_CHECKING:
    from mcpeek.inspector.act.actor import Actor


def add_action_options(parser: argparse.ArgumentParser) -> None:
    add = parser.add_argument
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
    if not (args.fault or args.faults or args.script):
        if args.seed is not None:
            raise UsageError("--seed does nothing without --fault or --faults")
        return None
    from mcpeek.inspector.act.actor import Actor
    from mcpeek.inspector.act.faults import FaultError, load_faults, parse_fault
    from mcpeek.inspector.act.scripts import ScriptError, load_script

    try:
        rules = [parse_fault(text) for text in args.fault]
        if args.faults is not None:
            rules.extend(load_faults(args.faults))
        scripts = [load_script(path) for path in args.script]
    except (FaultError, ScriptError) as exc:
        raise UsageError(str(exc)) from None
    return Actor(rules, scripts, seed=args.seed, report=report)
