"""Cutting a replay plan down to chosen flows: what is kept, what is compared, what is refused."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from mcpeek.inspector.analysis import analyze
from mcpeek.inspector.analysis.flow import Flow
from mcpeek.inspector.cli.main import main
from mcpeek.inspector.filters import compile_filter
from mcpeek.inspector.loaded import load
from mcpeek.inspector.records import Violation
from mcpeek.inspector.replay.replay_plan import ClientStep, HttpStep, ReplayPlan, build_plan
from mcpeek.inspector.replay.replay_select import SelectionError, matching_flows, select_flows
from mcpeek.inspector.replay.replay_transport import ReplayError
from mcpeek.inspector.replay.rerun import ReplayTarget, replay_flows
from mcpeek.inspector.testing.records import RecordBuilder
from tests.inspector.replay.test_replay_plan import legacy_capture


def plan_and_flows(b: RecordBuilder) -> tuple[ReplayPlan, list[Flow]]:
    flows = analyze(b.records).flows or []
    return build_plan(b.records, flows, b.header.transport), flows


def sent(plan: ReplayPlan) -> list[tuple[str | None, str | None]]:
    return [(s.method, s.name) for s in plan.steps if isinstance(s, ClientStep)]


def legacy_tour() -> RecordBuilder:
    b = legacy_capture()  # initialize, initialized, tools/call confirm (+ elicitation)
    b.request("tools/call", {"name": "add", "arguments": {"a": 1}}, id=3)
    b.request("tools/call", {"name": "slow", "arguments": {}}, id=4)
    b.notify("notifications/cancelled", {"requestId": 4}, dir="c2s")
    b.notify("notifications/cancelled", {"requestId": 3}, dir="c2s")  # too late: answered
    b.result(3, {"content": []})
    return b


def test_a_legacy_flow_keeps_the_handshake_sent_but_not_compared() -> None:
    plan, flows = plan_and_flows(legacy_tour())
    add = next(f for f in flows if f.name == "add")
    selected = select_flows(plan, [add.number], flows)
    assert sent(selected) == [
        ("initialize", None),
        ("notifications/initialized", None),
        ("tools/call", "add"),
        ("notifications/cancelled", None),  # the one naming add's id 3, not slow's
    ]
    assert [f.name for f in selected.flows] == ["add"]
    assert [f.method for f in selected.support] == ["initialize"]
    # the recorded answer to the server's elicitation is still there to give
    assert selected.answer_for("elicitation/create", {"message": "Proceed?"}) is not None
    # the whole plan is left as it was: the selection copies the steps it changes
    assert len(sent(plan)) == 7


def test_selecting_the_handshake_itself_compares_it() -> None:
    plan, flows = plan_and_flows(legacy_tour())
    selected = select_flows(plan, [1], flows)
    assert [f.method for f in selected.flows] == ["initialize"] and selected.support == []
    assert sent(selected) == [("initialize", None), ("notifications/initialized", None)]


def test_a_modern_mrtr_flow_keeps_every_attempt_and_discover() -> None:
    b = RecordBuilder(modern=True)
    b.request("server/discover", {}, id=1)
    b.result(1, {"supportedVersions": ["2026-07-28"], "capabilities": {}})
    b.request("tools/list", {}, id=2)
    b.result(2, {"tools": []})
    call = {"name": "confirm", "arguments": {}}
    b.request("tools/call", call, id=3)
    b.input_required(3, state="s1", requests={"ask": {"method": "elicitation/create"}})
    b.request("tools/call", {**call, "requestState": "s1", "inputResponses": {}}, id=4)
    b.result(4, {"content": []})
    plan, flows = plan_and_flows(b)
    confirm = next(f for f in flows if f.name == "confirm")
    selected = select_flows(plan, [confirm.number], flows)
    steps = [s for s in selected.steps if isinstance(s, ClientStep)]
    assert [(s.method, s.attempt) for s in steps] == [
        ("server/discover", 0),
        ("tools/call", 0),
        ("tools/call", 1),
    ]
    assert all(s.wait for s in steps)  # each answer came before the next step


def test_legacy_http_keeps_the_selected_session_stream_only() -> None:
    b = RecordBuilder()
    init = {"protocolVersion": "2025-11-25", "capabilities": {}}
    for session, first in (("s-a", 1), ("s-b", 10)):
        b.http(f"x{first}", "request", method="POST", headers=[("content-type", "x")])
        b.request("initialize", init, id=first, ch=f"x{first}")
        b.http(f"x{first}", "response", status=200, headers=[("mcp-session-id", session)])
        b.result(first, {"protocolVersion": "2025-11-25", "capabilities": {}}, ch=f"x{first}")
        b.http(f"g{first}", "request", method="GET", headers=[("mcp-session-id", session)])
        headers = [("mcp-session-id", session)]
        b.http(f"c{first}", "request", method="POST", headers=headers)
        b.request("tools/list", {}, id=first + 1, ch=f"c{first}")
        b.result(first + 1, {"tools": []}, ch=f"c{first}")
    plan, flows = plan_and_flows(b)
    second = [f for f in flows if f.method == "tools/list"][1]
    selected = select_flows(plan, [second.number], flows)
    http = [s for s in selected.steps if isinstance(s, HttpStep)]
    assert [(s.method, s.session) for s in http] == [("GET", "s-b")]
    requests = [s for s in selected.steps if isinstance(s, ClientStep)]
    assert [(s.method, s.message["id"]) for s in requests] == [
        ("initialize", 10),
        ("tools/list", 11),
    ]


def test_flows_that_cannot_be_re_sent_are_refused_in_one_line() -> None:
    plan, flows = plan_and_flows(legacy_tour())
    with pytest.raises(SelectionError, match=r"there is no flow 99 \(the capture has \d+\)"):
        select_flows(plan, [99], flows)
    with pytest.raises(SelectionError, match=r"flow 2 .*notifications/initialized.*not a client"):
        select_flows(plan, [2], flows)
    elicit = next(f for f in flows if f.method == "elicitation/create")
    with pytest.raises(SelectionError, match="sent by the server"):
        select_flows(plan, [elicit.number], flows)


def test_the_filter_sees_flows_as_the_viewer_does() -> None:
    b = legacy_tour()
    flows = analyze(b.records).flows or []
    add = next(f for f in flows if f.name == "add")
    assert matching_flows(flows, compile_filter("~n add")) == [add.number]
    error = Violation(
        rule="x.y", severity="error", msgs=[add.attempts[0].request.seq], message="m", spec="s"
    )
    assert matching_flows(flows, compile_filter("~v error")) == []
    assert matching_flows(flows, compile_filter("~v error"), [error]) == [add.number]


@pytest.mark.parametrize(
    ("options", "said"),
    [
        (["--flow", "99"], "mcpeek: --flow: there is no flow 99"),
        (["--flow", "2"], "is not a client request"),
        (["--filter", "~q nonsense"], "mcpeek: --filter:"),
        (["--filter", ""], "mcpeek: --filter is empty"),
        (["--filter", "  "], "mcpeek: --filter is empty"),
        (["--filter", "~n nothing-has-this-name"], "matches no client request"),
        (["--flow", "x"], "invalid int value"),
    ],
)
def test_bad_selections_exit_2_before_any_server_starts(
    options: list[str], said: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    capture = legacy_tour().save(tmp_path / "cap.jsonl")
    # the server would leave a marker file if it were started
    marker = tmp_path / "started"
    server = ["python3", "-c", f"open({str(marker)!r}, 'w')"]
    try:
        code = main(["replay", str(capture), *options, "--", *server])
    except SystemExit as exc:  # argparse's own refusal (--flow x)
        code = exc.code
    assert code == 2
    err = capsys.readouterr().err
    assert said in err and "Traceback" not in err
    assert not marker.exists()


# A stdio server that refuses initialize and answers anything else.
REFUSES_HANDSHAKE = """
import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if "id" not in m or "method" not in m:
        continue
    if m["method"] == "initialize":
        answer = {"error": {"code": -32600, "message": "no"}}
    else:
        answer = {"result": {"content": []}}
    print(json.dumps({"jsonrpc": "2.0", "id": m["id"], **answer}), flush=True)
"""


def test_a_failed_handshake_is_noted_though_not_compared(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    capture = legacy_tour().save(tmp_path / "cap.jsonl")
    flows = analyze(legacy_tour().records).flows or []
    add = next(f for f in flows if f.name == "add")
    server = [sys.executable, "-c", REFUSES_HANDSHAKE]
    code = main(["replay", str(capture), "--flow", str(add.number), "--no-check", "--", *server])
    out = capsys.readouterr().out
    assert code == 0, out  # add itself answered as recorded
    assert "note: the handshake, flow 1 initialize: recorded a result, live an error" in out
    assert "replay: 1 flow, 1 same, 0 different" in out


# A stdio server that answers every request with an empty tool result.
ANSWERS_EMPTY = """
import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if "id" in m and "method" in m:
        print(json.dumps({"jsonrpc": "2.0", "id": m["id"], "result": {"content": []}}), flush=True)
"""


def test_replay_flows_is_the_api_for_one_flow(tmp_path: Path) -> None:
    capture = legacy_tour().save(tmp_path / "cap.jsonl")
    before = capture.read_bytes()
    add = next(f for f in analyze(legacy_tour().records).flows or [] if f.name == "add")
    target = ReplayTarget(command=[sys.executable, "-c", ANSWERS_EMPTY])
    written = tmp_path / "again.jsonl"
    outcome = replay_flows(capture, [add.number], target, write=written)
    assert outcome.same and [r.number for r in outcome.reports] == [add.number]
    assert outcome.reports[0].live_ids == [2]  # after the live initialize (id 1)
    assert outcome.capture == written and capture.read_bytes() == before
    assert [f.method for f in load(written).flows] == [
        "initialize",
        "notifications/initialized",
        "tools/call",
    ]
    assert "notifications/cancelled" in written.read_text()  # add's own, sent after it
    with pytest.raises(ValueError, match="cannot be written into the capture it replays"):
        replay_flows(capture, [add.number], target, write=capture)
    gone = ReplayTarget(command=[str(tmp_path / "no-such-server")])
    with pytest.raises(ReplayError, match="cannot start the server"):
        replay_flows(capture, [add.number], gone, write=tmp_path / "never.jsonl")
    assert not (tmp_path / "never.jsonl").exists()  # nothing started: no capture left
    with pytest.raises(ValueError, match="a command or a url"):
        ReplayTarget()


def test_flow_numbers_are_those_of_show_json_as_the_help_says(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """--flow N is the "flow" of show --format json (plain show's line order is not:
    in legacy-stdio the elicitation, flow 8, ends before confirm, flow 7)."""
    import json

    capture = Path(__file__).resolve().parents[3] / "captures" / "legacy-stdio.jsonl"
    assert main(["show", str(capture), "--format", "json"]) == 0
    shown = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    loaded = load(capture)
    plan = build_plan(loaded.records, loaded.flows, loaded.header.transport)
    requests = [line for line in shown if line.get("flow") and line.get("ids")]
    assert len(requests) >= 10
    for line in requests:
        if line["method"] == "elicitation/create":
            continue  # the server's request: not one a replay sends
        [flow] = select_flows(plan, [line["flow"]], loaded.flows).flows
        assert (flow.method, flow.name) == (line["method"], line["name"])
    with pytest.raises(SystemExit):
        main(["replay", "--help"])
    said = " ".join(capsys.readouterr().out.split())
    assert "the viewer's # column" in said and '"flow" of mcpeek show --format json' in said


def test_an_orphan_answer_is_said_to_be_one(capsys: pytest.CaptureFixture[str]) -> None:
    """violations.jsonl's flow 7 is a valid JSON-RPC response to id 99, which no request
    asked: not 'a message that is not JSON-RPC'."""
    capture = Path(__file__).resolve().parents[3] / "captures" / "violations.jsonl"
    assert main(["replay", str(capture), "--flow", "7", "--", sys.executable, "-c", ""]) == 2
    err = capsys.readouterr().err
    assert "flow 7 (an answer to id 99, which no request asked, sent by the server)" in err
