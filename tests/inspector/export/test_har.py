"""``mcpeek export --format har``: an HTTP capture as HAR 1.2.

The document must validate against the HAR 1.2 schema (tests/vendor/har), keep
the capture's headers as redacted, give the bodies (SSE as text) and carry the
JSON-RPC messages and the violations in ``_mcpeek`` fields.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import jsonschema

from tests.conftest import mcpeek_argv
from tests.inspector.export.conftest import AWS_KEY, BEARER, CAPTURES, GITHUB_TOKEN

SCHEMA = Path(__file__).resolve().parents[2] / "vendor" / "har" / "har-1.2.schema.json"


def validate_har(document: dict[str, Any]) -> None:
    schema = json.loads(SCHEMA.read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(
        schema, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER
    )
    errors = sorted(validator.iter_errors(document), key=lambda e: list(e.path))
    assert not errors, "\n".join(f"{list(e.path)}: {e.message}" for e in errors[:10])


def export_har(capture: Path, *more: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        mcpeek_argv("export", str(capture), "--format", "har", *more),
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_the_schema_refuses_what_har_forbids() -> None:
    """The schema is strict enough to fail: an entry without timings is refused."""
    good = {
        "log": {
            "version": "1.2",
            "creator": {"name": "x", "version": "1"},
            "entries": [],
        }
    }
    validate_har(good)
    bad = json.loads(json.dumps(good))
    bad["log"]["entries"] = [{"startedDateTime": "2026-01-01T00:00:00Z", "time": 1}]
    try:
        validate_har(bad)
    except AssertionError:
        return
    raise AssertionError("an entry without request, response, cache and timings passed")


def test_an_sse_capture() -> None:
    done = export_har(CAPTURES / "modern-http-sse.jsonl")
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    validate_har(document)
    entries = document["log"]["entries"]
    records = [json.loads(line) for line in (CAPTURES / "modern-http-sse.jsonl").open()]
    assert len(entries) == sum(r.get("phase") == "request" for r in records)
    sse = [e for e in entries if e["response"]["content"]["mimeType"] == "text/event-stream"]
    assert sse, "the capture's count call streams its progress over SSE"
    for entry in sse:
        text = entry["response"]["content"]["text"]
        events = [json.loads(line[len("data: ") :]) for line in text.splitlines() if line]
        messages = [m for m in entry["_mcpeek"]["messages"] if m["dir"] == "s2c"]
        assert events == [json.loads(m["text"]) for m in messages]
    first = entries[0]
    assert first["request"]["url"] == "http://127.0.0.1:34819/mcp"
    assert json.loads(first["request"]["postData"]["text"])["method"] == "server/discover"
    assert first["timings"]["wait"] >= 0 and first["time"] == round(
        sum(first["timings"].values()), 3
    )


def test_redacted_headers_and_violations(secret_capture: Path) -> None:
    done = export_har(secret_capture)
    assert done.returncode == 0, done.stderr
    for secret in (BEARER, AWS_KEY, GITHUB_TOKEN):
        assert secret not in done.stdout
    document = json.loads(done.stdout)
    validate_har(document)
    (entry,) = document["log"]["entries"]
    headers = {h["name"]: h["value"] for h in entry["request"]["headers"]}
    assert headers["authorization"].startswith("<redacted sha256:")
    assert entry["request"]["queryString"] == [{"name": "tenant", "value": "a"}]
    assert [m["seq"] for m in entry["_mcpeek"]["messages"]] == [2, 4, 5]
    assert entry["_mcpeek"]["end"] == "complete"
    # A legacy-era request with no initialize before it: the rules say so.
    assert entry["_mcpeek"]["violations"], "the lone legacy call breaks a lifecycle rule"
    for violation in entry["_mcpeek"]["violations"]:
        assert set(violation) == {"rule", "severity", "message", "spec", "msgs"}


def test_the_file_is_written_private(tmp_path: Path) -> None:
    out = tmp_path / "out.har"
    done = export_har(CAPTURES / "modern-http-sse.jsonl", "-o", str(out))
    assert done.returncode == 0, done.stderr
    assert done.stdout == ""
    assert out.stat().st_mode & 0o777 == 0o600
    validate_har(json.loads(out.read_text()))
    again = export_har(CAPTURES / "modern-http-sse.jsonl", "-o", str(out))
    assert again.returncode == 2 and "--force" in again.stderr


def test_a_redacted_query_value_is_percent_encoded_in_the_url(tmp_path: Path) -> None:
    from urllib.parse import urlsplit

    from mcpeek.inspector.capture.writer import CaptureWriter
    from mcpeek.inspector.records import Http

    path = tmp_path / "key.jsonl"
    with CaptureWriter(path, transport="http", target="http://127.0.0.1:9/mcp") as writer:
        writer.write_many(
            [
                Http(x="x1", phase="request", method="GET", path="/mcp?api_key=s3cr3tvalue&a=b"),
                Http(x="x1", phase="response", status=405, headers=[]),
                Http(x="x1", phase="end", reason="complete"),
            ]
        )
    done = export_har(path)
    assert done.returncode == 0, done.stderr
    assert "s3cr3tvalue" not in done.stdout
    (entry,) = json.loads(done.stdout)["log"]["entries"]
    url = entry["request"]["url"]
    assert not set(url) & set(' <>"{}|\\^`') and url.isascii(), url
    assert urlsplit(url).query.startswith("api_key=%3Credacted%20sha256")
    query = {q["name"]: q["value"] for q in entry["request"]["queryString"]}
    assert query["api_key"].startswith("<redacted sha256:") and query["a"] == "b"
