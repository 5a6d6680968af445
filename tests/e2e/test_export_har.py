"""``mcpeek export --format har`` of the official SDK's HTTP sessions, both eras.

The HAR must validate against the HAR 1.2 schema and load in mitmproxy's own
HAR reader. mitmproxy's pins conflict with the dev extra, so it runs from a
venv of its own: ``MCPEEK_MITMPROXY_PYTHON`` names its interpreter; under CI
(``CI=true``) without it, the test builds one (``pip install mitmproxy``);
elsewhere the mitmproxy test is skipped (docs/export.md says how to run it).
"""

from __future__ import annotations

import json
import os
import subprocess
import venv
from pathlib import Path

import pytest

from tests.conftest import mcpeek_argv, needs
from tests.e2e.recording import record_http
from tests.inspector.export.test_har import validate_har

pytestmark = pytest.mark.e2e

READER = Path(__file__).with_name("mitm_read_har.py")


@pytest.fixture(scope="module")
def mitmproxy_python(tmp_path_factory: pytest.TempPathFactory) -> str:
    given = os.environ.get("MCPEEK_MITMPROXY_PYTHON")
    if given:
        return given
    if os.environ.get("CI", "").lower() not in ("1", "true", "yes"):
        needs(False, "mitmproxy in a venv of its own (set MCPEEK_MITMPROXY_PYTHON)")
    home = tmp_path_factory.mktemp("mitmproxy-venv")
    venv.create(home, with_pip=True)
    python = str(home / "bin" / "python")
    subprocess.run([python, "-m", "pip", "install", "-q", "mitmproxy>=11,<13"], check=True)
    return python


@pytest.fixture(scope="module", params=["modern", "legacy"])
def har(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp(f"har-{request.param}")
    capture = folder / "http.jsonl"
    record_http(request.param, capture)
    out = folder / "session.har"
    done = subprocess.run(
        mcpeek_argv("export", str(capture), "--format", "har", "-o", str(out)),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return out


def test_the_har_validates(har: Path) -> None:
    document = json.loads(har.read_text())
    validate_har(document)
    entries = document["log"]["entries"]
    posts = [e for e in entries if e["request"]["method"] == "POST"]
    methods = [json.loads(e["request"]["postData"]["text"]).get("method") for e in posts]
    assert "tools/call" in methods and "tools/list" in methods
    streamed = [e for e in entries if e["response"]["content"]["mimeType"] == "text/event-stream"]
    assert any("notifications/progress" in e["response"]["content"]["text"] for e in streamed)
    assert all(e["_mcpeek"]["violations"] == [] for e in entries)  # the SDK's traffic is clean


def test_mitmproxy_reads_it(har: Path, mitmproxy_python: str) -> None:
    done = subprocess.run(
        [mitmproxy_python, str(READER), str(har)], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-3000:]
    flows = json.loads(done.stdout)
    entries = json.loads(har.read_text())["log"]["entries"]
    assert len(flows) == len(entries)
    for flow, entry in zip(flows, entries, strict=True):
        assert flow["method"] == entry["request"]["method"]
        assert flow["url"] == entry["request"]["url"]
        assert flow["status"] == entry["response"]["status"]
        assert flow["request_body"] == entry["request"].get("postData", {}).get("text", "")
        assert flow["response_body"] == entry["response"]["content"].get("text", "")
