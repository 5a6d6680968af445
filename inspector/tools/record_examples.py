"""Record the example captures in ``captures/`` from real peers, through mcpeek itself.

    python -m mcpeek.inspector.tools.record_examples [--out DIR] [--only NAME]...

Run from a clone of the repository, with the official MCP SDK (``mcp`` >= 2.3)
installed in this interpreter: the peers are the scripts in ``tests/peers/``
(found next to this package, or given with ``--peers``), started with this
interpreter, and mcpeek is this checkout's (``python -m mcpeek``).

=========================  ==========================================================
``modern-stdio.jsonl``     2026-07-28 over stdio: SDK tour client ⇄ SDK tour server
``modern-http-sse.jsonl``  2026-07-28 over Streamable HTTP (SSE for the progress)
``legacy-stdio.jsonl``     2025-11-25 over stdio, ``initialize`` first
``violations.jsonl``       a scripted modern client ⇄ ``bad_server.py``, which breaks
                           five rules of the catalog
=========================  ==========================================================

Every capture is recorded into a temporary directory inside ``--out``, then
checked: it must load (``inspector.load``) without problems, hold exactly the
expected era, transport, message count and flows, and both the live flags the
proxy wrote and ``mcpeek lint`` must report exactly the expected rule IDs
(none for the conformant ones). Only when
every capture passes are they moved into place, so a failed run never leaves
a half-written or wrong capture behind. The peers are started by
:mod:`mcpeek.inspector.tools._peer_runs`, the captures checked by
:mod:`mcpeek.inspector.tools._capture_checks`.

Exit codes: 0 recorded; 1 a recording or a check failed (what went wrong is
printed); 2 the environment cannot record (no ``mcp`` SDK, no
``tests/peers/``, a bad option), with a one-line message.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path

from mcpeek.inspector.tools._capture_checks import Example, FlowShape, check
from mcpeek.inspector.tools._peer_runs import (
    REPO_ROOT,
    EnvironmentProblem,
    RecordingFailed,
    Runner,
    check_environment,
    expect,
)

# Public here, wherever defined: the tests import the checks from the recorder's module.
__all__ = [
    "BY_NAME",
    "EXAMPLES",
    "RECORDERS",
    "EnvironmentProblem",
    "Example",
    "FlowShape",
    "RecordingFailed",
    "check",
    "main",
    "record",
]

DEFAULT_PEERS = REPO_ROOT / "tests" / "peers"
DEFAULT_OUT = REPO_ROOT / "captures"
MODERN, LEGACY = "2026-07-28", "2025-11-25"


# -- what each capture must hold ---------------------------------------------------------
TOUR_MODERN: tuple[FlowShape, ...] = (
    ("c2s", "server/discover", None, "complete", 1, 0),
    ("c2s", "tools/list", None, "complete", 1, 0),
    ("c2s", "tools/call", "add", "complete", 1, 0),
    ("c2s", "tools/call", "count", "complete", 1, 3),
    ("c2s", "tools/call", "get_weather", "complete", 1, 0),
    ("c2s", "tools/call", "confirm", "complete", 2, 0),  # input_required, then the retry
    ("c2s", "resources/list", None, "complete", 1, 0),
    ("c2s", "resources/read", "mcpeek://hello", "complete", 1, 0),
    ("c2s", "prompts/list", None, "complete", 1, 0),
    ("c2s", "prompts/get", "greet", "complete", 1, 0),
)
TOUR_LEGACY: tuple[FlowShape, ...] = (
    ("c2s", "initialize", None, "complete", 1, 0),
    ("c2s", "notifications/initialized", None, "notification", 0, 0),
    ("c2s", "tools/list", None, "complete", 1, 0),
    ("c2s", "tools/call", "add", "complete", 1, 0),
    ("c2s", "tools/call", "count", "complete", 1, 3),
    ("c2s", "tools/call", "get_weather", "complete", 1, 0),
    ("c2s", "tools/call", "confirm", "complete", 1, 0),
    ("s2c", "elicitation/create", None, "complete", 1, 0),  # asked in the middle of confirm
    ("c2s", "resources/list", None, "complete", 1, 0),
    ("c2s", "resources/read", "mcpeek://hello", "complete", 1, 0),
    ("c2s", "prompts/list", None, "complete", 1, 0),
    ("c2s", "prompts/get", "greet", "complete", 1, 0),
)
BAD_SERVER: tuple[FlowShape, ...] = (
    ("c2s", "server/discover", None, "complete", 1, 0),
    ("c2s", "tools/list", None, "complete", 1, 0),
    ("c2s", "tools/call", "add", "complete", 1, 0),
    ("c2s", "tools/call", "count", "complete", 1, 3),
    ("c2s", "tools/call", "get_weather", "complete", 1, 0),
    # a notification sent with an id looks like a request nobody answers
    ("s2c", "notifications/tools/list_changed", None, "unanswered", 1, 0),
    ("s2c", None, None, "orphan", 0, 0),  # the response to id 99
)


EXAMPLES: tuple[Example, ...] = (
    Example(
        name="modern-stdio",
        summary="2026-07-28 over stdio, SDK client and server: discover, tools (progress, MRTR),"
        " resources, prompts",
        era="modern",
        protocol_version=MODERN,
        transport="stdio",
        messages=25,
        flows=TOUR_MODERN,
    ),
    Example(
        name="modern-http-sse",
        summary="2026-07-28 over Streamable HTTP, SDK client and server; count() streams SSE",
        era="modern",
        protocol_version=MODERN,
        transport="http",
        messages=25,
        flows=TOUR_MODERN,
    ),
    Example(
        name="legacy-stdio",
        summary="2025-11-25 over stdio, SDK client and server: initialize, tools (progress,"
        " elicitation), resources, prompts",
        era="legacy",
        protocol_version=LEGACY,
        transport="stdio",
        messages=26,
        flows=TOUR_LEGACY,
    ),
    Example(
        name="violations",
        summary="2026-07-28 over stdio, scripted client and a misbehaving server",
        era="modern",
        protocol_version=MODERN,
        transport="stdio",
        messages=15,
        flows=BAD_SERVER,
        rules=(
            "notification.with-id",
            "progress.not-increasing",
            "response.unknown-id",
            "result.result-type-missing",
            "tools.output-schema",
        ),
    ),
)
BY_NAME = {example.name: example for example in EXAMPLES}


# -- how each capture is recorded -------------------------------------------------------
TOUR_OUTCOME = {
    "add": 5,
    "progress": 3,
    "weather": "Sunny in Paris",
    "confirm": "confirmed: Proceed?",
    "prompt": "Say hello to Ada.",
}


def record_stdio_tour(runner: Runner, era: str, out: Path) -> None:
    proxy = runner.mcpeek("stdio", "-q", "-w", str(out), "--", *runner.peer("sdk_tour_server.py"))
    client = runner.peer("sdk_tour_client.py", "--era", era, "--", *proxy)
    outcome = runner.run(client, f"sdk_tour_client.py --era {era} (stdio)")
    expect(f"{era} stdio", outcome, era=era, **TOUR_OUTCOME)


def record_modern_stdio(runner: Runner, out: Path) -> None:
    record_stdio_tour(runner, "modern", out)


def record_legacy_stdio(runner: Runner, out: Path) -> None:
    record_stdio_tour(runner, "legacy", out)


def record_modern_http(runner: Runner, out: Path) -> None:
    server = runner.start(
        runner.peer("sdk_http_server.py", "--port", "0"),
        r"listening on (http://\S+)",
        "sdk_http_server.py",
    )
    try:
        upstream = server.match.group(1)
        proxy = runner.start(
            [
                *runner.mcpeek("http", "--upstream", upstream, "--listen", "127.0.0.1:0"),
                *("-w", str(out), "--no-tui"),
            ],
            r"proxying (http://\S+) ->",
            "mcpeek http",
        )
        try:
            client = runner.peer(
                "sdk_tour_client.py", "--era", "modern", "--url", proxy.match.group(1)
            )
            outcome = runner.run(client, "sdk_tour_client.py --era modern (http)")
        finally:
            code = proxy.stop()
        if code != 0:
            raise RecordingFailed(f"mcpeek http exited {code}:\n{proxy.output()[-2000:]}")
        expect("modern http", outcome, era="modern", **TOUR_OUTCOME)
    finally:
        server.stop()


def record_violations(runner: Runner, out: Path) -> None:
    proxy = runner.mcpeek("stdio", "-q", "-w", str(out), "--", *runner.peer("bad_server.py"))
    outcome = runner.run(runner.peer("raw_client.py", "--", *proxy), "raw_client.py")
    expect("violations", outcome, answered=[1, 2, 3, 4, 5], other=5, exit=0)


RECORDERS: dict[str, Callable[[Runner, Path], None]] = {
    "modern-stdio": record_modern_stdio,
    "modern-http-sse": record_modern_http,
    "legacy-stdio": record_legacy_stdio,
    "violations": record_violations,
}


# -- the command -------------------------------------------------------------------------
def record(out_dir: Path, peers: Path, names: Sequence[str]) -> list[tuple[Example, Path]]:
    """Record, check, then move every capture into ``out_dir``; all or nothing."""
    runner = Runner(peers)
    out_dir.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".recording-", dir=out_dir))
    try:
        done: list[tuple[Example, Path]] = []
        for name in names:
            example = BY_NAME[name]
            path = staging / example.file_name
            print(f"record_examples: recording {example.file_name} ...", file=sys.stderr)
            RECORDERS[name](runner, path)
            check(path, example)
            done.append((example, path))
        placed = []
        for example, path in done:
            target = out_dir / example.file_name
            path.chmod(0o644)  # mcpeek keeps captures private; these are for the repository
            os.replace(path, target)
            placed.append((example, target))
        return placed
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m mcpeek.inspector.tools.record_examples",
        description="Record the example captures from the real-SDK peers, through mcpeek.",
    )
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="default: captures/")
    parser.add_argument(
        "--peers", type=Path, default=DEFAULT_PEERS, help="the peer scripts (tests/peers/)"
    )
    parser.add_argument(
        "--only",
        action="append",
        choices=list(RECORDERS),
        help="record only this capture (repeatable; default: all)",
    )
    args = parser.parse_args(argv)
    names: list[str] = args.only or list(RECORDERS)
    try:
        check_environment(args.peers.resolve())
        placed = record(args.out, args.peers.resolve(), names)
    except EnvironmentProblem as exc:
        print(f"record_examples: error: {exc}", file=sys.stderr)
        return 2
    except RecordingFailed as exc:
        print(f"record_examples: FAILED, nothing was replaced: {exc}", file=sys.stderr)
        return 1
    except OSError as exc:
        print(f"record_examples: error: {exc}", file=sys.stderr)
        return 2
    for example, path in placed:
        counts = Counter(f[3] for f in example.flows)
        print(
            f"{path}: {example.messages} messages, {len(example.flows)} flows "
            f"({', '.join(f'{n} {s}' for s, n in sorted(counts.items()))}), "
            f"lint: {', '.join(example.rules) or 'clean'}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
