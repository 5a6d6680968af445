"""``mcpeek replay`` against a server that floods its stdout: a bounded report."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from mcpeek.inspector.cli.live import PRINTED_PER_RULE
from mcpeek.inspector.cli.main import main
from mcpeek.inspector.replay.per_kind import SAID_PER_KIND
from mcpeek.inspector.testing.records import RecordBuilder

FLOOD_LINES = 10_000

# Writes FLOOD_LINES lines that are not JSON, then answers each request, then exits.
FLOODS = """
import json, sys
sys.stdout.write("y\\n" * int(sys.argv[1]))
sys.stdout.flush()
for line in sys.stdin:
    m = json.loads(line)
    if "id" in m and "method" in m:
        answer = {"jsonrpc": "2.0", "id": m["id"], "result": {"protocolVersion": "2025-11-25",
                  "capabilities": {}, "serverInfo": {"name": "s", "version": "1"}}}
        print(json.dumps(answer), flush=True)
"""


def capture(path: Path) -> Path:
    b = RecordBuilder()
    b.request("initialize", {"protocolVersion": "2025-11-25", "capabilities": {}}, id=1)
    b.result(
        1,
        {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "serverInfo": {"name": "s", "version": "1"},
        },
    )
    return b.save(path)


def flood(tmp_path: Path, *options: str) -> None:
    server = tmp_path / "floods.py"
    server.write_text(FLOODS)
    argv = ["replay", str(capture(tmp_path / "cap.jsonl")), *options]
    assert main([*argv, "--", sys.executable, str(server), str(FLOOD_LINES)]) == 1


def test_a_flood_gets_a_few_lines_per_rule_and_note_and_one_count(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    flood(tmp_path)
    lines = capsys.readouterr().out.splitlines()
    notes = [line for line in lines if line.endswith("is not JSON: b'y'")]
    flags = [line for line in lines if line.startswith("mcpeek: ERROR stdio.not-json: ")]
    assert len(notes) == SAID_PER_KIND and len(flags) == PRINTED_PER_RULE
    more_notes = [line for line in lines if "more times (not noted each)" in line]
    assert more_notes == [
        f"note: the live server sent something that is not JSON "
        f"{FLOOD_LINES - SAID_PER_KIND} more times (not noted each)"
    ]
    more_flags = f"mcpeek: stdio.not-json: {FLOOD_LINES - PRINTED_PER_RULE} more flags not printed"
    assert more_flags in lines
    assert lines[-1] == f"replay: 1 flow, 1 same, 0 different; {FLOOD_LINES} server-side violations"
    assert len(lines) < 40


def test_json_counts_what_it_does_not_print(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    flood(tmp_path, "--format", "json")
    objects = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    violations = [o for o in objects if o["kind"] == "violation"]
    assert len(violations) == PRINTED_PER_RULE
    summary = objects[-1]
    assert summary["violations"] == FLOOD_LINES
    assert summary["unshown"] == {"stdio.not-json": FLOOD_LINES - PRINTED_PER_RULE}
    assert len(summary["notes"]) == SAID_PER_KIND + 1
