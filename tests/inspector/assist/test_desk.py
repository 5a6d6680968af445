"""The captures' MCP server's tools, without the SDK: the answers ``mcpeek mcp`` gives.

Each answer is checked against what the CLI prints for the same capture
(``show --format json``, ``lint --format json``), so the server and the CLI
cannot drift apart; wrong arguments must give one clear :class:`AssistError`.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path

import pytest

from mcpeek.inspector.assist.desk import AssistError, Desk
from mcpeek.inspector.assist.shapes import BODY_LIMIT
from mcpeek.inspector.assist.shelf import Shelf
from mcpeek.inspector.capture import CaptureWriter
from mcpeek.inspector.cli.main import main
from mcpeek.inspector.testing.records import RecordBuilder

CAPTURES = Path(__file__).parents[3] / "captures"
BUNDLED = sorted(CAPTURES.glob("*.jsonl"))
SECRET = "Bearer sk-live-do-not-show-0123456789abcdef"


def cli_json(capsys: pytest.CaptureFixture[str], *argv: str) -> list[dict[str, object]]:
    main(list(argv))
    return [json.loads(line) for line in capsys.readouterr().out.splitlines()]


@pytest.fixture
def desk(tmp_path: Path) -> Desk:
    return Desk(Shelf(tmp_path / "home", BUNDLED))


@pytest.mark.parametrize("path", BUNDLED, ids=lambda p: p.name)
def test_flows_and_findings_match_show_and_lint(
    desk: Desk, path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # show ends with one line per conversation (its surface): the flows are the rest
    lines = cli_json(capsys, "show", "--format", "json", str(path.resolve()))
    shown = [line for line in lines if line.get("kind") != "conversation"]
    linted = cli_json(capsys, "lint", "--format", "json", str(path.resolve()))
    page = desk.list_flows(path.name, limit=1000)
    assert page["total"] == page["matched"] == len(shown) > 0
    rows = {row["flow"]: row for row in page["flows"]}
    for line in shown:  # show prints a flow when it ends; the desk lists them by number
        row = rows[line["flow"]]
        assert {k: row[k] for k in line} == line
    assert desk.lint(path.name)["violations"] == linted
    for row in page["flows"]:  # every answer is plain JSON (a notification has no id)
        detail = json.loads(json.dumps(desk.get_flow(path.name, row["flow"])))
        assert [m["seq"] for m in detail["messages"]] == row["msgs"]
    per_flow = sum(row["violations"] for row in page["flows"])
    assert per_flow == len([v for v in linted if v["msgs"]])


def test_list_captures_newest_first_with_counts(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    for age, path in enumerate(BUNDLED):  # the first is the newest, then in order
        shutil.copy(path, home / path.name)
        os.utime(home / path.name, (1_000_000_000 - age, 1_000_000_000 - age))
    os.utime(home / BUNDLED[1].name, None)  # now the newest
    desk = Desk(Shelf(home, []))
    listed = desk.list_captures()["captures"]
    expected = [BUNDLED[1].name] + [p.name for p in BUNDLED if p != BUNDLED[1]]
    assert [c["name"] for c in listed] == expected
    assert sorted(c["name"] for c in listed) == sorted(p.name for p in BUNDLED)
    bad = next(c for c in listed if c["name"] == "violations.jsonl")
    assert bad["violations"]["error"] >= 1 and bad["live"] is False
    assert bad["transport"] == "stdio" and bad["era"] == "modern"
    assert bad["flows"] == len(desk.list_flows("violations.jsonl", limit=1000)["flows"])
    http = next(c for c in listed if c["name"] == "modern-http-sse.jsonl")
    assert http["transport"] == "http" and http["duration_s"] > 0


def test_filter_limit_and_offset(desk: Desk) -> None:
    every = desk.list_flows("violations.jsonl", limit=1000)["flows"]
    with_violations = desk.list_flows("violations.jsonl", filter="~v", limit=1000)
    assert [r["flow"] for r in with_violations["flows"]] == [
        r["flow"] for r in every if r["violations"]
    ]
    calls = desk.list_flows("modern-stdio.jsonl", filter="~m tools/call", limit=1000)["flows"]
    assert calls and all(r["method"] == "tools/call" for r in calls)
    first = desk.list_flows("modern-stdio.jsonl", limit=2)
    second = desk.list_flows("modern-stdio.jsonl", limit=2, offset=2)
    assert first["more"] and [r["flow"] for r in first["flows"] + second["flows"]] == [
        r["flow"] for r in desk.list_flows("modern-stdio.jsonl", limit=4)["flows"]
    ]


def test_get_flow_gives_messages_and_explained_violations(desk: Desk) -> None:
    flagged = desk.list_flows("violations.jsonl", filter="~v error", limit=1)["flows"][0]
    detail = desk.get_flow("violations.jsonl", flagged["flow"])
    assert [m["seq"] for m in detail["messages"]] == flagged["msgs"]
    assert all(json.loads(m["raw"]) for m in detail["messages"])
    assert {m["dir"] for m in detail["messages"]} <= {"c2s", "s2c"}
    (violation,) = detail["violations"]
    assert violation["spec"].startswith("https://modelcontextprotocol.io/")
    explained = desk.explain_rule(violation["rule"])
    assert violation["explanation"] == explained["explanation"]
    assert explained["severity"] == violation["severity"]


def test_a_long_body_is_cut_with_its_size(tmp_path: Path) -> None:
    b = RecordBuilder(modern=True)
    b.request("tools/call", {"name": "echo", "arguments": {"text": "x" * 100_000}}, id=1)
    b.result(1, {"content": []})
    desk = Desk(Shelf(None, [b.save(tmp_path / "big.jsonl")]))
    request = desk.get_flow("big.jsonl", 1)["messages"][0]
    assert request["cut"] is True and request["bytes"] > 100_000
    assert len(request["raw"].encode()) == BODY_LIMIT
    assert str(request["bytes"]) in request["note"]


def test_redacted_headers_stay_redacted(tmp_path: Path) -> None:
    b = RecordBuilder("http", modern=True)
    b.http("x1", "request", method="POST", path="/mcp", headers=[("authorization", SECRET)])
    b.http("x1", "response", status=200, headers=[("content-type", "application/json")])
    b.request("tools/list", {}, id=1)
    b.records[-1].ch = "x1"  # type: ignore[union-attr]
    b.result(1, {"tools": []})
    b.records[-1].ch = "x1"  # type: ignore[union-attr]
    b.http("x1", "end")
    path = b.save(tmp_path / "secret.jsonl")
    assert SECRET not in path.read_text()  # the recording redacted it
    desk = Desk(Shelf(None, [path]))
    answers = json.dumps(
        [
            desk.get_flow("secret.jsonl", 1),
            desk.list_flows("secret.jsonl"),
            desk.list_captures(),
            desk.lint("secret.jsonl"),
        ]
    )
    assert "sk-live" not in answers
    request = desk.get_flow("secret.jsonl", 1)["messages"][0]
    headers = dict(request["http"]["request_headers"])
    assert headers["authorization"].startswith("<redacted")


@pytest.mark.parametrize(
    ("call", "words"),
    [
        (lambda d: d.list_flows("nope.jsonl"), "no capture 'nope.jsonl'"),
        (lambda d: d.list_flows(""), "give a name"),
        (lambda d: d.list_flows("violations.jsonl", filter="~x"), "unknown operator ~x"),
        (lambda d: d.list_flows("violations.jsonl", limit=0), "limit must be"),
        (lambda d: d.list_flows("violations.jsonl", offset=-1), "offset must be"),
        (lambda d: d.get_flow("violations.jsonl", 999), "no flow 999"),
        (lambda d: d.get_flow("violations.jsonl", 0), "no flow 0"),
        (lambda d: d.lint("violations.jsonl", "bad"), "min_severity"),
        (lambda d: d.explain_rule("no.such-rule"), "no rule 'no.such-rule'"),
    ],
)
def test_wrong_arguments_say_what_is_wrong(desk: Desk, call: object, words: str) -> None:
    with pytest.raises(AssistError, match=words.replace("~", "\\~")):
        call(desk)  # type: ignore[operator]


def test_a_file_that_is_no_capture_is_an_error_not_a_crash(tmp_path: Path) -> None:
    junk = tmp_path / "junk.jsonl"
    junk.write_text("not a capture\n")
    desk = Desk(Shelf(None, [junk]))
    with pytest.raises(AssistError, match="cannot be read"):
        desk.lint(str(junk))
    (listed,) = desk.list_captures()["captures"]
    assert listed["name"] == "junk.jsonl" and listed["error"]


def test_a_grown_capture_is_read_again(tmp_path: Path) -> None:
    b = RecordBuilder(modern=True)
    b.request("tools/list", {}, id=1)
    b.result(1, {"tools": []})
    path = b.save(tmp_path / "grows.jsonl")
    desk = Desk(Shelf(tmp_path, []))
    assert desk.list_flows("grows.jsonl")["total"] == 1
    b.request("tools/call", {"name": "x"}, id=2)
    b.result(2, {"content": []})
    b.save(path)
    assert desk.list_flows("grows.jsonl")["total"] == 2


def test_diff_captures_is_mcpeek_diff(desk: Desk, capsys: pytest.CaptureFixture[str]) -> None:
    a, b = (CAPTURES / "modern-stdio.jsonl").resolve(), (CAPTURES / "violations.jsonl").resolve()
    (printed,) = cli_json(capsys, "diff", "--format", "json", str(a), str(b))
    answer = desk.diff_captures(str(a), str(b))
    assert answer == printed and answer["same"] is False
    assert desk.diff_captures(str(a), str(a))["same"] is True
    with pytest.raises(AssistError, match="no capture 'nope'"):
        desk.diff_captures("nope", str(b))


def test_listing_again_reads_only_what_changed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from mcpeek.inspector.assist import study as study_module
    from mcpeek.inspector.assist.study import Studies

    home = tmp_path / "home"
    home.mkdir()
    for path in BUNDLED:
        shutil.copy(path, home / path.name)
    reads: list[str] = []
    real = study_module.study

    def counted(path: Path) -> study_module.Study:
        reads.append(path.name)
        return real(path)

    monkeypatch.setattr(study_module, "study", counted)
    desk = Desk(Shelf(home, []), Studies(kept=1))  # fewer kept than there are captures
    first = desk.list_captures()
    assert sorted(reads) == sorted(p.name for p in BUNDLED)
    assert desk.list_captures() == first and len(reads) == len(BUNDLED)
    b = RecordBuilder(modern=True)
    b.request("tools/list", {}, id=1)
    b.result(1, {"tools": []})
    b.save(home / "violations.jsonl")  # a capture rewritten: read again, alone
    listed = desk.list_captures()["captures"]
    assert reads[len(BUNDLED) :] == ["violations.jsonl"]
    assert next(c for c in listed if c["name"] == "violations.jsonl")["flows"] == 1


def test_a_call_in_flight_in_a_live_capture_is_pending_not_unanswered(tmp_path: Path) -> None:
    b = RecordBuilder(modern=True, start=time.time())
    b.request("tools/list", {}, id=1)
    b.result(1, {"tools": []})
    b.request("tools/call", {"name": "slow", "arguments": {}}, id=2)
    path = tmp_path / "live.jsonl"
    desk = Desk(Shelf(tmp_path, []))
    writer = CaptureWriter(path, transport="stdio", target=["server"])  # a proxy, writing
    try:
        for record in b.records[1:]:
            writer.write(record)  # type: ignore[arg-type]
        (line,) = desk.list_captures()["captures"]
        assert line["live"] is True
        statuses = [r["status"] for r in desk.list_flows("live.jsonl")["flows"]]
        assert statuses == ["complete", "pending"]
        rules = {v["rule"] for v in desk.lint("live.jsonl")["violations"]}
        assert "request.unanswered" not in rules  # a call in flight is not judged yet
        b.result(2, {"content": []})
        writer.write(b.records[-1])  # type: ignore[arg-type]
        statuses = [r["status"] for r in desk.list_flows("live.jsonl")["flows"]]
        assert statuses == ["complete", "complete"]
    finally:
        writer.close()
    (line,) = desk.list_captures()["captures"]
    assert line["live"] is False and line["flows"] == 2
    # what lint says of the finished capture (the shapes compared in the tests above)
    assert "request.unanswered" not in {v["rule"] for v in desk.lint("live.jsonl")["violations"]}
