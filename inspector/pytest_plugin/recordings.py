"""The recording proxies a test's MCP traffic goes through (``mcp_record`` recording).

- :class:`StdioRecording` — ``mcpeek stdio -w FILE -- CMD``, spawned by the client;
  done when the capture holds the ``exit`` event and stopped growing;
- :class:`HttpRecording` — ``mcpeek http --no-tui`` on a free loopback port, a
  subprocess of the plugin, stopped with SIGTERM.

Like the mocks (:mod:`~mcpeek.inspector.pytest_plugin.runs`), each has
``settle(timeout) -> bool`` and ``close()``.
"""

from __future__ import annotations

import signal
import subprocess
import time
from collections.abc import Sequence
from pathlib import Path
from urllib.parse import urlsplit

from mcpeek.inspector.pytest_plugin.runs import (
    POLL,
    START_TIMEOUT,
    STOP_TIMEOUT,
    PluginError,
    has_event,
    mcpeek_command,
    wait_until,
)


class StdioRecording:
    transport = "stdio"

    def __init__(self, command: Sequence[str], recording: Path) -> None:
        if isinstance(command, str) or not command:
            raise PluginError(
                "mcp_record.stdio() takes the server's command line as a list, "
                'e.g. ["python", "server.py"]'
            )
        self.recording = recording
        recording.unlink(missing_ok=True)
        self.command = mcpeek_command(
            "stdio", "-w", str(recording), "--force", "--", *map(str, command)
        )
        self._size = -1
        self._ended = False

    @property
    def started(self) -> bool:
        return self.recording.exists()

    def ended(self) -> bool:
        """The ``exit`` event is written; then the live checks append their violation
        records and mcpeek closes the file: wait until it stops growing."""
        if not self.started or self._ended:
            return True
        if not has_event(self.recording, "exit"):
            return False
        size = self.recording.stat().st_size
        self._ended, self._size = size == self._size, size
        return self._ended

    def settle(self, timeout: float) -> bool:
        def ended() -> bool:
            if self.ended():
                return True
            time.sleep(0.1)  # two looks at the size, apart
            return False

        return wait_until(ended, timeout)

    def close(self) -> None:
        """The process is the client's: nothing to stop."""


class HttpRecording:
    transport = "http"

    def __init__(self, upstream: str, recording: Path, log: Path) -> None:
        parts = urlsplit(upstream)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise PluginError(f"mcp_record.http({upstream!r}): expected an http:// or https:// URL")
        self.recording = recording
        self.log = log
        recording.unlink(missing_ok=True)
        argv = mcpeek_command(
            "http",
            "--upstream",
            upstream,
            "--listen",
            "127.0.0.1:0",
            "-w",
            str(recording),
            "--force",
        )
        argv.append("--no-tui")
        with log.open("wb") as err:
            self.proc = subprocess.Popen(
                argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err
            )
        self.url = self._wait_for_url(parts.query)
        self.exit_code: int | None = None

    def _wait_for_url(self, query: str) -> str:
        marker = "mcpeek: proxying "
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            text = self.log.read_text("utf-8", "replace")
            for line in text.splitlines():
                if line.startswith(marker) and " -> " in line:
                    url = line[len(marker) :].split(" -> ", 1)[0]
                    return f"{url}?{query}" if query else url
            if self.proc.poll() is not None:
                break
            time.sleep(POLL)
        self.close()
        raise PluginError(f"mcpeek http did not start:\n{self.stderr_tail()}")

    started = True

    def settle(self, timeout: float) -> bool:
        self.close()
        return True

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.exit_code = self.proc.returncode

    def stderr_tail(self, lines: int = 20) -> str:
        try:
            text = self.log.read_text("utf-8", "replace")
        except OSError:
            return ""
        return "\n".join(text.splitlines()[-lines:])
