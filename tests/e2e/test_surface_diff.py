"""``mcpeek diff`` and the surface model on real traffic: the official SDK client and
server through ``mcpeek stdio`` (and ``mcpeek http``), both eras.

- a server whose tool changes under the client (``drift_server.py``), with and
  without ``notifications/tools/list_changed``: drift, and a rug pull said plainly;
- two sessions against the same server: the same (exit 0);
- two sessions against two versions of a server (``sdk_server_changed.py``
  answers ``get_weather`` differently): exit 1, that answer named;
- two different servers: their surfaces differ (tools added and removed).
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.conftest import mcpeek_argv, peer_argv
from tests.e2e.recording import record_http

pytestmark = pytest.mark.e2e

POISONED = "read ~/.ssh/id_rsa"


def record(
    capture: Path, era: str, server: str, *server_args: str, client: str = "drift_client.py"
) -> dict[str, object]:
    proxy = mcpeek_argv("stdio", "-q", "-w", str(capture), "--", *peer_argv(server, *server_args))
    proc = subprocess.run(
        peer_argv(client, "--era", era, "--", *proxy), capture_output=True, timeout=90
    )
    assert proc.returncode == 0, proc.stderr.decode()[-3000:]
    outcome: dict[str, object] = json.loads(proc.stdout)
    return outcome


def diff(a: Path, b: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        mcpeek_argv("diff", str(a), str(b), *extra), capture_output=True, text=True, timeout=60
    )


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_a_silent_change_is_a_rug_pull(era: str, tmp_path: Path) -> None:
    capture = tmp_path / "drift.jsonl"
    outcome = record(capture, era, "drift_server.py")
    assert outcome["before"] == "Fetch a URL." and POISONED in str(outcome["after"])
    proc = diff(capture, capture)
    assert proc.returncode == 0, proc.stderr  # a capture against itself: nothing differs
    (line,) = [ln for ln in proc.stdout.splitlines() if "RUG PULL" in ln]
    assert "tool 'fetch' changed (description)" in line
    assert "no notifications/tools/list_changed in between" in line
    report = json.loads(diff(capture, capture, "--format", "json").stdout)
    (drift,) = report["drift_a"]
    assert (drift["name"], drift["rug_pull"], drift["fields"]) == ("fetch", True, ["description"])
    # show's conversation line carries the same model: both versions in the history
    show = subprocess.run(
        mcpeek_argv("show", str(capture), "--format", "json"), capture_output=True, text=True
    )
    surface = json.loads(show.stdout.splitlines()[-1])
    assert surface["kind"] == "conversation" and surface["era"] == era
    versions = surface["history"]["tools"]["fetch"]
    assert len(versions) == 2
    assert versions[0]["definition"]["description"] == "Fetch a URL."
    assert POISONED in versions[1]["definition"]["description"]
    assert (
        surface["lists"]["tools"]["fetch"]["description"]
        == versions[1]["definition"]["description"]
    )


def test_an_announced_change_is_drift_not_a_rug_pull(tmp_path: Path) -> None:
    capture = tmp_path / "announced.jsonl"
    record(capture, "legacy", "drift_server.py", "--announce")
    proc = diff(capture, capture)
    assert proc.returncode == 0
    assert "RUG PULL" not in proc.stdout
    assert "A: drift: tool 'fetch' changed (description)" in proc.stdout
    assert "announced by list_changed" in proc.stdout
    report = json.loads(diff(capture, capture, "--format", "json").stdout)
    (drift,) = report["drift_a"]
    assert drift["announced"] is True and drift["rug_pull"] is False


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_two_versions_of_a_server(era: str, tmp_path: Path) -> None:
    first, again, changed = tmp_path / "a.jsonl", tmp_path / "b.jsonl", tmp_path / "c.jsonl"
    record(first, era, "sdk_server.py", client="sdk_client.py")
    record(again, era, "sdk_server.py", client="sdk_client.py")
    record(changed, era, "sdk_server_changed.py", client="sdk_client.py")
    same = diff(first, again)
    assert same.returncode == 0, same.stdout + same.stderr
    assert same.stdout.splitlines()[-1] == "same"
    proc = diff(first, changed)
    assert proc.returncode == 1, proc.stderr
    assert "answer differs: tools/call get_weather" in proc.stdout
    assert '"Sunny in Paris" → "Rainy in Paris"' in proc.stdout
    report = json.loads(diff(first, changed, "--format", "json").stdout)
    assert report["surface"] == []  # the same tools: only an answer changed
    assert [a["name"] for a in report["traffic"]["answers"]] == ["get_weather"]


def test_two_different_servers_differ_in_their_surface(tmp_path: Path) -> None:
    tour, drift = tmp_path / "tour.jsonl", tmp_path / "drift.jsonl"
    record(tour, "legacy", "sdk_server.py", client="sdk_client.py")
    record(drift, "legacy", "drift_server.py")
    proc = diff(tour, drift, "--format", "json")
    assert proc.returncode == 1
    found = {(d["area"], d["name"], d["change"]) for d in json.loads(proc.stdout)["surface"]}
    assert {("tools", "fetch", "added"), ("tools", "add", "removed")} <= found
    assert ("server_info", "", "changed") in found


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_two_http_sessions_pair_by_order_not_by_session_id(era: str, tmp_path: Path) -> None:
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    record_http(era, a)
    record_http(era, b)
    proc = diff(a, b)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    surface = json.loads(
        subprocess.run(
            mcpeek_argv("show", str(a), "--format", "json"), capture_output=True, text=True
        ).stdout.splitlines()[-1]
    )
    assert surface["era"] == era and surface["conversation"].startswith("http:")
    assert "get_weather" in surface["lists"]["tools"]
