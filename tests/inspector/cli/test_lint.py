"""``mcpeek lint`` and ``mcpeek rules``: formats, filters and exit codes."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from mcpeek import rules
from mcpeek.inspector.cli.main import main
from mcpeek.inspector.testing.records import RecordBuilder, modern_meta


def bad_capture(tmp_path: Path, name: str = "bad.jsonl") -> Path:
    b = RecordBuilder()
    b.raw('{"jsonrpc":"1.0","id":1,"method":"ping"}')  # jsonrpc.version (error)
    b.raw('{"jsonrpc":"2.0","id":1,"result":{}}', "s2c")
    return b.save(tmp_path / name)


def good_capture(tmp_path: Path) -> Path:
    b = RecordBuilder(modern=True)
    b.request("server/discover", id=1)
    b.result(
        1,
        {
            "supportedVersions": ["2026-07-28"],
            "capabilities": {},
            "ttlMs": 0,
            "cacheScope": "private",
            "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "s", "version": "1"}},
        },
    )
    return b.save(tmp_path / "good.jsonl")


def test_clean_capture_exits_0(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["lint", str(good_capture(tmp_path))]) == 0
    assert "no violations" in capsys.readouterr().out


def test_text_groups_by_rule_with_excerpt(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = bad_capture(tmp_path)
    assert main(["lint", str(path)]) == 1
    out = capsys.readouterr().out
    assert f"{path}: 1 error" in out
    assert "ERROR   jsonrpc.version  (1)" in out
    assert '{"jsonrpc":"1.0","id":1,"method":"ping"}' in out
    assert "https://modelcontextprotocol.io/specification/" in out


def test_json_lines(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = bad_capture(tmp_path)
    assert main(["lint", "--format", "json", str(path)]) == 1
    objects = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    version = [o for o in objects if o["rule"] == "jsonrpc.version"]
    assert len(version) == 1
    assert set(version[0]) == {"file", "rule", "severity", "message", "msgs", "spec"}
    assert version[0]["file"] == str(path) and version[0]["msgs"] == [1]


def test_sarif(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = bad_capture(tmp_path)
    assert main(["lint", "--format", "sarif", str(path)]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert doc["version"] == "2.1.0"
    run = doc["runs"][0]
    driver_rules = run["tool"]["driver"]["rules"]
    assert {r["id"] for r in driver_rules} >= set(rules.catalog())
    assert all(r["helpUri"].startswith("https://") for r in driver_rules if "helpUri" in r)
    result = next(r for r in run["results"] if r["ruleId"] == "jsonrpc.version")
    assert driver_rules[result["ruleIndex"]]["id"] == "jsonrpc.version"
    assert result["level"] == "error"
    location = result["locations"][0]["physicalLocation"]
    assert location["artifactLocation"]["uri"] == str(path)
    assert location["region"]["startLine"] == 2  # header is line 1, seq 1 is line 2


def test_junit(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = bad_capture(tmp_path)
    assert main(["lint", "--format", "junit", str(path)]) == 1
    root = ET.fromstring(capsys.readouterr().out)
    suite = root.find("testsuite")
    assert suite is not None and suite.get("name") == str(path)
    cases = {c.get("name"): c for c in suite.findall("testcase")}
    assert set(cases) >= set(rules.catalog())
    assert cases["jsonrpc.version"].find("failure") is not None
    assert cases["id.null"].find("failure") is None
    assert int(suite.get("failures", "0")) >= 1


def test_junit_of_a_file_it_could_not_read_claims_no_passing_rule(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    assert main(["lint", "--format", "junit", str(empty)]) == 2
    suite = ET.fromstring(capsys.readouterr().out).find("testsuite")
    assert suite is not None
    assert [c.get("name") for c in suite.findall("testcase")] == ["read"]
    assert suite.get("tests") == "1" and suite.get("errors") == "1"


def test_filters_and_fail_on(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = bad_capture(tmp_path)
    assert main(["lint", "--ignore", "jsonrpc.version", "--format", "json", str(path)]) in (0, 1)
    assert "jsonrpc.version" not in capsys.readouterr().out
    assert main(["lint", "--min-severity", "error", "--format", "json", str(path)]) == 1
    severities = {json.loads(x)["severity"] for x in capsys.readouterr().out.splitlines()}
    assert severities == {"error"}


def test_fail_on_judges_what_min_severity_hides(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    b = RecordBuilder(modern=True)
    meta = {k: v for k, v in modern_meta().items() if not k.endswith("/clientInfo")}
    b.send(
        {"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": meta}}, "c2s"
    )
    result = {"supportedVersions": ["2026-07-28"], "capabilities": {}, "ttlMs": 0}
    b.result(1, {**result, "cacheScope": "private"})  # and no serverInfo: a warning too
    path = b.save(tmp_path / "warnings.jsonl")
    assert main(["lint", "--format", "json", str(path)]) == 0  # warnings only
    shown = {json.loads(x)["severity"] for x in capsys.readouterr().out.splitlines()}
    assert shown == {"warning"}
    argv = ["lint", "--min-severity", "error", "--fail-on", "warning", str(path)]
    assert main(argv) == 1  # DESIGN: 0 only with no violation at or above --fail-on
    captured = capsys.readouterr()
    assert f"{path}: no violations" in captured.out
    assert "are below --min-severity error, so not shown" in captured.err


def test_unreadable_file_exits_2_but_others_are_linted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    good = good_capture(tmp_path)
    assert main(["lint", str(tmp_path / "missing.jsonl"), str(good)]) == 2
    captured = capsys.readouterr()
    assert "no such file" in captured.err
    assert f"{good}: no violations" in captured.out


@pytest.mark.parametrize(
    ("argv", "message"),
    [(["--spec", "1999-01-01"], "unknown --spec"), (["--ignore", "no.such-rule"], "no such rule")],
)
def test_usage_errors(
    tmp_path: Path, argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["lint", *argv, str(good_capture(tmp_path))]) == 2
    assert message in capsys.readouterr().err


def test_rules_lists_the_catalog(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["rules", "--format", "json"]) == 0
    listed = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [r["id"] for r in listed] == list(rules.catalog())
    assert all(
        r["spec"].startswith("https://modelcontextprotocol.io/specification/") for r in listed
    )
    assert main(["rules"]) == 0
    assert f"{len(listed)} rules" in capsys.readouterr().out


@pytest.mark.parametrize(
    "raw",
    [
        "[" * 5000 + "]" * 5000,
        '{"a":' * 5000 + "1" + "}" * 5000,
        '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":' + "[" * 5000 + "]" * 5000 + "}",
    ],
    ids=["list", "object", "params"],
)
def test_a_message_nested_too_deep_is_not_json(
    raw: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    b = RecordBuilder()
    b.raw(raw)
    b.raw('{"jsonrpc":"1.0","id":2,"method":"ping"}')  # still checked after it
    assert main(["lint", "--format", "json", str(b.save(tmp_path / "deep.jsonl"))]) == 1
    captured = capsys.readouterr()
    found = {(o["rule"], o["msgs"][-1]) for o in map(json.loads, captured.out.splitlines())}
    assert ("stdio.not-json", 1) in found
    assert ("jsonrpc.version", 2) in found
    assert not any(rule.startswith("inspector.") for rule, _ in found)
    assert "Traceback" not in captured.err


@pytest.mark.parametrize("fmt", ["json", "sarif", "junit"])
def test_machine_formats_do_not_hide_read_problems(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], fmt: str
) -> None:
    """A truncated last line is noted on stderr, and in SARIF and JUnit themselves."""
    path = good_capture(tmp_path)
    with path.open("ab") as capture:
        capture.write(b'{"seq":3,"t":0.1,"type":"msg"')  # cut short: the disk filled
    assert main(["lint", "--format", fmt, str(path)]) == 0
    out, err = capsys.readouterr()
    notes = [line for line in err.splitlines() if line.startswith(f"mcpeek: note: {path}: ")]
    assert len(notes) == 1 and "line 4" in notes[0]
    if fmt == "json":
        assert out == ""  # stdout keeps one shape: violations only
    elif fmt == "sarif":
        invocation = json.loads(out)["runs"][0]["invocations"][0]
        assert invocation["executionSuccessful"] is True
        [notification] = invocation["toolExecutionNotifications"]
        assert "line 4" in notification["message"]["text"]
        uri = notification["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
        assert uri == str(path)
    else:
        suite = ET.fromstring(out).find("testsuite")
        assert suite is not None
        system_err = suite.find("system-err")
        assert system_err is not None and "line 4" in (system_err.text or "")
        assert suite.get("failures") == "0"


def test_text_notes_read_problems_in_its_report_only(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = good_capture(tmp_path)
    with path.open("ab") as capture:
        capture.write(b'{"seq":3,"t":0.1,"type":"msg"')
    assert main(["lint", str(path)]) == 0
    out, err = capsys.readouterr()
    assert "  note: line 4" in out and err == ""
