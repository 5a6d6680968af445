"""Findings on messages mcpeek made are marked, shown, and never blamed on a peer."""

from __future__ import annotations

import subprocess
from pathlib import Path

import msgspec

from mcpeek.inspector.analysis import Analyzer
from mcpeek.inspector.records import Act, Header, Msg
from mcpeek.rules.blame import blames_the_client
from mcpeek.rules.engine import Reported, RuleEngine
from tests.conftest import mcpeek_argv

CORRUPT = '{"jsonrpc":"2.0", <corrupted by mcpeek'
ORIGINAL = '{"jsonrpc":"2.0","id":1,"method":"ping"}'


def records() -> list[object]:
    return [
        Header(transport="stdio", target=["server"]),
        Act(
            seq=1,
            t=1.0,
            action="corrupt",
            dir="c2s",
            ch="stdio",
            by="fault",
            rule="~a => corrupt",
            raw=ORIGINAL,
        ),
        Msg(seq=2, t=1.0, dir="c2s", ch="stdio", raw=CORRUPT, made="corrupt"),
        Msg(seq=3, t=1.1, dir="c2s", ch="stdio", raw="not json either"),
    ]


def findings() -> list[Reported]:
    found: list[Reported] = []
    analyzer = Analyzer([RuleEngine(found.append)])
    for record in records():
        analyzer.feed(record)  # type: ignore[arg-type]
    analyzer.finish()
    return found


def test_a_finding_on_a_made_message_is_marked_and_not_the_clients() -> None:
    found = findings()
    on_made = [f for f in found if f.msgs and f.msgs[-1] == 2]
    on_peer = [f for f in found if f.msgs and f.msgs[-1] == 3]
    assert on_made and on_peer  # the same rule fires on both
    assert all(f.made == "corrupt" and "[mcpeek's doing (corrupt:" in f.message for f in on_made)
    assert all(f.record().made == "corrupt" for f in on_made)
    assert not any(blames_the_client(f, lambda seq: "c2s") for f in on_made)
    assert all(f.made is None for f in on_peer)
    assert any(blames_the_client(f, lambda seq: "c2s") for f in on_peer)


def test_lint_shows_them_and_does_not_fail_on_them(tmp_path: Path) -> None:
    capture = tmp_path / "made.jsonl"
    lines = [msgspec.json.encode(r) for r in records()[:3]]  # only mcpeek's corruption
    capture.write_bytes(b"\n".join(lines) + b"\n")
    proc = subprocess.run(
        mcpeek_argv("lint", str(capture)), capture_output=True, text=True, timeout=60
    )
    assert "[mcpeek's doing (corrupt:" in proc.stdout
    assert proc.returncode == 0, proc.stdout
    shown = subprocess.run(
        mcpeek_argv("show", str(capture)), capture_output=True, text=True, timeout=60
    )
    assert "⚡ corrupt → ping id 1  (fault: ~a => corrupt)" in shown.stdout


def test_a_request_whose_answer_mcpeek_dropped_is_not_the_servers_fault() -> None:
    found: list[Reported] = []
    analyzer = Analyzer([RuleEngine(found.append)])
    for record in [
        Header(transport="stdio", target=["server"]),
        Msg(seq=1, t=1.0, dir="c2s", ch="stdio", raw=ORIGINAL),
        Act(seq=2, t=1.1, action="drop", dir="s2c", ch="stdio", by="fault", rule="~a => drop",
            raw='{"jsonrpc":"2.0","id":1,"result":{}}'),
        Msg(seq=3, t=1.2, dir="c2s", ch="stdio", raw='{"jsonrpc":"2.0","id":2,"method":"ping"}'),
    ]:  # fmt: skip
        analyzer.feed(record)
    analyzer.finish()
    unanswered = {f.msg_id: f for f in found if f.rule == "request.unanswered"}
    assert unanswered[1].made == "drop"  # its answer was dropped by mcpeek
    assert unanswered[2].made is None  # this one the server really left unanswered
