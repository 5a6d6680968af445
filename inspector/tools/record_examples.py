"""Record the example captures in ``captures/`` from real peers, through mcpeek itself.

    python -m inspector.tools.record_examples [--out DIR] [--only NAME]...

Run from a clone of the repository, with the official MCP SDK (``mcp`` >= 2.3)
installed in this interpreter: the peers are the scripts in ``tests/peers/``
(found next to this package, or given with ``--peers``), started with this
interpreter, and mcpeek is this checkout's (``python -m inspector``).

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
a half-written or wrong capture behind.

Exit codes: 0 recorded; 1 a recording or a check failed (what went wrong is
printed); 2 the environment cannot record (no ``mcp`` SDK, no
``tests/peers/``, a bad option), with a one-line message.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import importlib.util
import json
import os
import queue
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import inspector
from inspector.capture import CaptureError
from inspector.records import Violation

REPO_ROOT = Path(__file__).resolve().parents[2]
DEFAULT_PEERS = REPO_ROOT / "tests" / "peers"
DEFAULT_OUT = REPO_ROOT / "captures"
MIN_MCP = (2, 3)
PEER_SCRIPTS = (
    "sdk_tour_client.py",
    "sdk_tour_server.py",
    "sdk_http_server.py",
    "raw_client.py",
    "bad_server.py",
)
RUN_TIMEOUT_S = 90.0
READY_TIMEOUT_S = 30.0
STOP_TIMEOUT_S = 30.0
MODERN, LEGACY = "2026-07-28", "2025-11-25"
LINT = (sys.executable, "-m", "inspector", "lint", "--format", "json", "--min-severity", "warning")


class EnvironmentProblem(Exception):
    """Recording cannot even start (exit 2, one line)."""


class RecordingFailed(Exception):
    """A peer failed, or a capture is not what it should be (exit 1)."""


# -- what each capture must hold ---------------------------------------------------------
FlowShape = tuple[str, str | None, str | None, str, int, int]
"""(sender, method, name, status, attempts, progress notifications) of one flow."""

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


@dataclass(frozen=True)
class Example:
    name: str
    summary: str
    era: str
    protocol_version: str
    transport: str
    messages: int
    flows: tuple[FlowShape, ...]
    rules: tuple[str, ...] = ()
    """Sorted rule IDs ``mcpeek lint --min-severity warning`` reports, one per finding."""

    @property
    def file_name(self) -> str:
        return f"{self.name}.jsonl"


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


def flow_shapes(capture: inspector.Capture) -> tuple[FlowShape, ...]:
    return tuple(
        (f.sender, f.method, f.name, f.status, len(f.attempts), f.progress_count)
        for f in capture.flows
    )


def lint_rules(path: Path) -> list[str]:
    """The rule IDs ``mcpeek lint`` reports at warning or above, sorted, one per finding."""
    proc = subprocess.run(
        [*LINT, str(path)],
        check=False,
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT_S,
        cwd=REPO_ROOT,
    )
    if proc.returncode not in (0, 1):
        raise RecordingFailed(f"mcpeek lint {path.name} failed: {proc.stderr.strip()[-500:]}")
    return sorted(json.loads(line)["rule"] for line in proc.stdout.splitlines() if line.strip())


def check(path: Path, example: Example, *, lint: bool = True) -> inspector.Capture:
    """Raise :class:`RecordingFailed` unless ``path`` holds what ``example`` promises."""
    try:
        capture = inspector.load(path)
    except CaptureError as exc:
        raise RecordingFailed(f"{path.name}: cannot be read: {exc}") from None
    wrong: list[str] = []
    if capture.problems:
        wrong.append(f"unreadable lines: {capture.problems[:3]}")
    if capture.header.transport != example.transport:
        wrong.append(f"transport {capture.header.transport!r}, expected {example.transport!r}")
    eras = [(c.era, c.protocol_version) for c in capture.conversations]
    if eras != [(example.era, example.protocol_version)]:
        wrong.append(f"conversations {eras}, expected [{(example.era, example.protocol_version)}]")
    if len(capture.messages) != example.messages:
        wrong.append(f"{len(capture.messages)} messages, expected {example.messages}")
    shapes = flow_shapes(capture)
    if shapes != example.flows:
        wrong.append(f"flows {list(shapes)}, expected {list(example.flows)}")
    live = sorted(
        r.rule for r in capture.records if isinstance(r, Violation) and r.severity != "info"
    )
    if live != list(example.rules):
        wrong.append(f"live flags {live or 'none'}, expected {list(example.rules) or 'none'}")
    if lint:
        found = lint_rules(path)
        if found != list(example.rules):
            expected = list(example.rules) or "nothing"
            wrong.append(f"lint found {found or 'nothing'}, expected {expected}")
    if wrong:
        raise RecordingFailed(f"{path.name} is not what it should be: " + "; ".join(wrong))
    return capture


# -- running the peers -------------------------------------------------------------------
class Runner:
    """Starts peers and mcpeek from the repository root with this interpreter."""

    def __init__(self, peers: Path) -> None:
        self.peers = peers
        self.cwd = REPO_ROOT  # where ``python -m inspector`` finds this checkout
        bin_dir = Path(sys.executable).parent
        found = shutil.which("python", path=str(bin_dir))
        # the capture header keeps the server command: "python tests/peers/x.py" on every
        # machine rather than this checkout's absolute interpreter path
        same = found is not None and os.path.samefile(found, sys.executable)
        self.python = "python" if same else sys.executable
        self.env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"}
        self.env.pop("MCPEEK_HOME", None)
        self.env["PYTHONUNBUFFERED"] = "1"

    def peer(self, script: str, *args: str) -> list[str]:
        path = self.peers / script
        try:
            shown = str(path.relative_to(self.cwd))
        except ValueError:
            shown = str(path)
        return [self.python, shown, *args]

    def mcpeek(self, *args: str) -> list[str]:
        return [self.python, "-m", "inspector", *args]

    def run(self, argv: list[str], what: str) -> dict[str, Any]:
        """Run a client to its end; its one JSON line of stdout is the outcome."""
        try:
            proc = subprocess.run(
                argv,
                check=False,
                cwd=self.cwd,
                env=self.env,
                capture_output=True,
                text=True,
                timeout=RUN_TIMEOUT_S,
            )
        except subprocess.TimeoutExpired:
            raise RecordingFailed(f"{what}: still running after {RUN_TIMEOUT_S:g} s") from None
        if proc.returncode != 0:
            raise RecordingFailed(f"{what}: exit {proc.returncode}\n{proc.stderr.strip()[-3000:]}")
        try:
            outcome: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
        except (IndexError, ValueError):
            raise RecordingFailed(f"{what}: printed no outcome: {proc.stdout[-500:]!r}") from None
        return outcome

    def start(self, argv: list[str], ready: str, what: str) -> Background:
        return Background(argv, self.cwd, self.env, ready, what)


class Background:
    """A long-running process (a server, the HTTP proxy) whose stderr is read in a thread."""

    def __init__(
        self, argv: list[str], cwd: Path, env: dict[str, str], ready: str, what: str
    ) -> None:
        self.what = what
        self.lines: queue.Queue[str | None] = queue.Queue()
        self.seen: list[str] = []
        self.proc = subprocess.Popen(
            argv,
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        threading.Thread(target=self._pump, daemon=True).start()
        self.match = self._wait_for(re.compile(ready))

    def _pump(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.lines.put(line)
        self.lines.put(None)

    def _wait_for(self, pattern: re.Pattern[str]) -> re.Match[str]:
        deadline = time.monotonic() + READY_TIMEOUT_S
        while (left := deadline - time.monotonic()) > 0:
            try:
                line = self.lines.get(timeout=left)
            except queue.Empty:
                break
            if line is None:
                self.proc.wait()
                raise RecordingFailed(
                    f"{self.what} exited ({self.proc.returncode}) before it was ready:\n"
                    + "".join(self.seen)[-2000:]
                )
            self.seen.append(line)
            if match := pattern.search(line):
                return match
        self.stop()
        raise RecordingFailed(f"{self.what} not ready after {READY_TIMEOUT_S:g} s")

    def stop(self) -> int:
        """SIGINT, then SIGKILL if it lingers; the exit code."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(timeout=STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        return self.proc.returncode

    def output(self) -> str:
        while True:
            try:
                line = self.lines.get_nowait()
            except queue.Empty:
                break
            if line is not None:
                self.seen.append(line)
        return "".join(self.seen)


def expect(what: str, outcome: dict[str, Any], **wanted: Any) -> None:
    wrong = {k: outcome.get(k) for k, v in wanted.items() if outcome.get(k) != v}
    if wrong:
        raise RecordingFailed(f"{what}: unexpected outcome {wrong}, expected {wanted}")


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
def check_environment(peers: Path) -> None:
    missing = [s for s in PEER_SCRIPTS if not (peers / s).is_file()]
    if not peers.is_dir() or missing:
        raise EnvironmentProblem(
            f"no peer scripts in {peers} (missing {', '.join(missing)}); "
            "run from a clone of the mcpeek repository or pass --peers DIR"
        )
    try:
        found = importlib.util.find_spec("mcp") is not None
    except (ImportError, ValueError):
        found = False
    if not found:
        raise EnvironmentProblem(
            f"the official MCP SDK is not importable by {sys.executable}; "
            "install it with: pip install 'mcp>=2.3' (or pip install -e '.[dev]')"
        )
    try:
        version = importlib.metadata.version("mcp")
    except importlib.metadata.PackageNotFoundError:
        return  # importable but not installed as a distribution (a source tree): trust it
    numbers = tuple(int(n) for n in re.findall(r"\d+", version)[:2])
    if numbers < MIN_MCP:
        raise EnvironmentProblem(
            f"mcp {version} is too old: the captures need mcp>=2.3 (2026-07-28 support)"
        )


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
        prog="python -m inspector.tools.record_examples",
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
