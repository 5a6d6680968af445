"""Running the peers for ``record_examples``: can they run, start them, stop them.

The peers are scripts in ``tests/peers/`` run with this interpreter from the
repository root (so that ``python -m mcpeek`` is this checkout's), with
``python`` on ``PATH`` so that a capture header names the server as
``python tests/peers/….py`` on every machine. A client runs to its end and
prints its outcome as one JSON line; a server or the HTTP proxy runs in the
:class:`Background` until it is stopped with SIGINT. A peer that fails, hangs
or never gets ready is a :class:`RecordingFailed`; an environment that cannot
record at all (no peer scripts, no ``mcp`` SDK) is an :class:`EnvironmentProblem`.
"""

from __future__ import annotations

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
import threading
import time
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[2]
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


class EnvironmentProblem(Exception):
    """Recording cannot even start (exit 2, one line)."""


class RecordingFailed(Exception):
    """A peer failed, or a capture is not what it should be (exit 1)."""


# -- running the peers -------------------------------------------------------------------
class Runner:
    """Starts peers and mcpeek from the repository root with this interpreter."""

    def __init__(self, peers: Path) -> None:
        self.peers = peers
        self.cwd = REPO_ROOT  # where ``python -m mcpeek`` finds this checkout
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
        return [self.python, "-m", "mcpeek", *args]

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


# -- whether they can run at all --------------------------------------------------------
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
