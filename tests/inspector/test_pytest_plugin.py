"""The pytest plugin (``mcpeek.inspector.pytest_plugin``): ``mcp_replay`` and ``mcp_record``.

Each test writes a small test module with ``pytester`` and runs pytest on it,
so the plugin is exercised the way users meet it: loaded from its ``pytest11``
entry point, its fixtures requested by name. The end-to-end ones run the
official SDK peers (tests/peers/) as real processes through real mcpeek
processes; the others check what needs no process (options, paths, modes).
"""

from __future__ import annotations

import json
import shutil
import subprocess
from importlib.metadata import entry_points
from pathlib import Path

import pytest

from mcpeek.inspector.pytest_plugin.checks import client_side, describe, lint_capture, summary
from tests.conftest import PEERS, mcpeek_argv

pytest_plugins = ["pytester"]

REPO = Path(__file__).resolve().parents[2]
CAPTURES = REPO / "captures"
BAD_SERVER_RULES = [
    "notification.with-id",
    "progress.not-increasing",
    "response.unknown-id",
    "result.result-type-missing",
    "tools.output-schema",
]

# The top of every generated test module: the peers, and a way to run one.
PRELUDE = f"""
import json
import subprocess
import sys
from pathlib import Path

import pytest

PY = sys.executable
PEERS = Path({str(PEERS)!r})
CAPTURES = Path({str(CAPTURES)!r})


def run(*argv, timeout=90):
    proc = subprocess.run([PY, *map(str, argv)], capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.splitlines()[-1])
"""


def module(body: str) -> str:
    return PRELUDE + "\n" + body


QUIET = (
    "-p",
    "no:textual-snapshot",  # shares one temporary directory per process: not nestable
    "-p",
    "no:hypothesispytest",  # its terminal summary costs seconds
    "-o",
    "asyncio_default_fixture_loop_scope=function",  # no deprecation warning
)


def inner(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    """pytest in this process, for the tests that start no process."""
    return pytester.runpytest(*QUIET, *args)


def outer(pytester: pytest.Pytester, *args: str, timeout: float = 180) -> pytest.RunResult:
    """pytest in a new process, for the tests whose fixtures start processes."""
    return pytester.runpytest_subprocess(*QUIET, *args, timeout=timeout)


# -- no process --------------------------------------------------------------------------
def test_the_plugin_is_a_pytest11_entry_point() -> None:
    found = {e.name: e.value for e in entry_points(group="pytest11")}
    assert found.get("mcpeek") == "mcpeek.inspector.pytest_plugin"


def test_header_names_the_record_mode(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("def test_nothing():\n    pass\n")
    inner(pytester).stdout.fnmatch_lines(["mcpeek: record mode once"])
    result = inner(pytester, "--mcpeek-record=none")
    result.stdout.fnmatch_lines(["mcpeek: record mode none"])
    pytester.makeini("[pytest]\nmcpeek_record_mode = all\nmcpeek_capture_dir = recorded\n")
    result = inner(pytester)
    result.stdout.fnmatch_lines(["mcpeek: record mode all", "mcpeek: captures in */recorded"])
    result = inner(pytester, "--mcpeek-record=new")  # the option wins over the ini
    result.stdout.fnmatch_lines(["mcpeek: record mode new"])


def test_a_bad_record_mode_is_a_usage_error(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("def test_nothing():\n    pass\n")
    result = inner(pytester, "--mcpeek-record=sometimes")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--mcpeek-record*invalid choice*sometimes*"])
    pytester.makeini("[pytest]\nmcpeek_record_mode = sometimes\n")
    result = inner(pytester)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*mcpeek_record_mode = 'sometimes': expected one of*"])


def test_capture_locations(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\n")  # the rootdir: pytester's directory
    pytester.mkpydir("sub")
    pytester.makepyfile(
        **{
            "sub/test_where": """
            from pathlib import Path
            import pytest

            HERE = Path(__file__).parent

            def test_default(mcp_record):
                assert mcp_record.capture_path() == HERE / "captures/test_where/test_default.jsonl"
                assert mcp_record.capture_path(2).name == "test_default.2.jsonl"

            @pytest.mark.parametrize("city", ["Paris", "New York/NY"])
            def test_param(mcp_record, city):
                assert mcp_record.capture_path().parent == HERE / "captures/test_where"
                assert mcp_record.capture_path().name in (
                    "test_param[Paris].jsonl", "test_param[New_York_NY]-fe2e95a9.jsonl"
                )

            class TestGroup:
                def test_method(self, mcp_record):
                    assert mcp_record.capture_path().name == "TestGroup.test_method.jsonl"

            @pytest.mark.mcp_record(capture_dir="fixtures/mcp", name="shared")
            def test_marker(mcp_record):
                assert mcp_record.capture_path() == HERE / "fixtures/mcp/shared.jsonl"
            """
        }
    )
    inner(pytester).assert_outcomes(passed=5)


def test_ids_that_differ_only_in_replaced_characters_get_captures_of_their_own(
    pytester: pytest.Pytester,
) -> None:
    # Regression: "Paris/1" and "Paris:1" both became test_w[Paris_1].jsonl, so the
    # second test replayed the first one's capture.
    pytester.makepyfile(
        test_ids="""
        import hashlib
        import pytest

        NAMES = {}

        @pytest.mark.parametrize("city", ["Paris/1", "Paris:1", "Paris_1", "x" * 200])
        def test_w(mcp_record, city):
            NAMES[city] = mcp_record.capture_path().name

        def test_names():
            assert NAMES["Paris/1"] == "test_w[Paris_1]-de710997.jsonl"
            assert NAMES["Paris:1"] == "test_w[Paris_1]-89b423f3.jsonl"
            assert NAMES["Paris_1"] == "test_w[Paris_1].jsonl"  # nothing replaced: no hash
            long = NAMES["x" * 200].removesuffix(".jsonl")
            digest = hashlib.sha256(f"test_w[{'x' * 200}]".encode()).hexdigest()[:8]
            assert len(long) == 150 and long.endswith(f"-{digest}")
            assert long.startswith("test_w[xxx")
        """
    )
    inner(pytester).assert_outcomes(passed=5)


def test_the_ini_capture_dir_is_relative_to_the_rootdir(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\nmcpeek_capture_dir = tests/mcp\n")
    pytester.makepyfile(
        test_ini="""
        from pathlib import Path

        def test_it(mcp_record, pytestconfig):
            expected = pytestconfig.rootpath / "tests/mcp/test_ini/test_it.jsonl"
            assert mcp_record.capture_path() == expected
        """
    )
    inner(pytester).assert_outcomes(passed=1)


MODES_MODULE = """
import json
from pathlib import Path

LOG = Path(__file__).parent / "decisions.txt"


def decide(mcp_record, name, calls=1):
    for _ in range(calls):
        argv = mcp_record.stdio(["python", "server.py"])  # never spawned
        with LOG.open("a") as log:
            log.write(f"{name} {'replay' if 'serve' in argv else 'record'}\\n")


def test_has(mcp_record):
    decide(mcp_record, "has")


def test_missing(mcp_record):
    decide(mcp_record, "missing")


def test_partial(mcp_record):
    decide(mcp_record, "partial", calls=2)
"""


@pytest.mark.parametrize(
    ("mode", "decisions", "outcomes"),
    [
        (
            "once",
            ["has replay", "missing record", "partial replay"],
            {"passed": 2, "failed": 1},
        ),
        (
            "new",
            ["has replay", "missing record", "partial replay", "partial record"],
            {"passed": 3},
        ),
        ("none", ["has replay", "partial replay"], {"passed": 1, "failed": 1, "errors": 1}),
        (
            "all",
            ["has record", "missing record", "partial record", "partial record"],
            {"passed": 3},
        ),
    ],
)
def test_record_modes_decide_per_capture(
    pytester: pytest.Pytester, mode: str, decisions: list[str], outcomes: dict[str, int]
) -> None:
    pytester.makepyfile(test_modes=MODES_MODULE)
    recorded = pytester.path / "captures" / "test_modes"
    recorded.mkdir(parents=True)
    for name in ("test_has", "test_partial"):  # test_partial's second capture is missing
        shutil.copy(CAPTURES / "modern-stdio.jsonl", recorded / f"{name}.jsonl")
    result = inner(pytester, f"--mcpeek-record={mode}")
    result.assert_outcomes(**outcomes)
    log = pytester.path / "decisions.txt"
    assert log.read_text().splitlines() == decisions
    if mode == "once":
        result.stdout.fnmatch_lines(["*no capture *test_partial.2.jsonl*--mcpeek-record=new*"])
    if mode == "none":
        result.stdout.fnmatch_lines(
            ["*ERROR at setup of test_missing*", "*no capture *test_missing.jsonl*'none'*"]
        )
    assert not list(recorded.glob("*.recording.jsonl"))  # nothing spawned, nothing saved


def test_mcp_replay_finds_captures_next_to_the_test_then_in_the_rootdir(
    pytester: pytest.Pytester,
) -> None:
    pytester.makeini("[pytest]\n")
    (pytester.path / "captures").mkdir()
    shutil.copy(CAPTURES / "modern-stdio.jsonl", pytester.path / "captures" / "root.jsonl")
    pytester.mkpydir("suite")
    (pytester.path / "suite" / "captures").mkdir()
    shutil.copy(
        CAPTURES / "legacy-stdio.jsonl", pytester.path / "suite" / "captures" / "near.jsonl"
    )
    pytester.makepyfile(
        **{
            "suite/test_paths": """
            from pathlib import Path

            def test_near(mcp_replay, pytestconfig):
                mock = mcp_replay("captures/near.jsonl")
                assert mock.capture == Path(__file__).parent / "captures/near.jsonl"
                assert mock.command[4:6] == ["serve", str(mock.capture)]

            def test_root(mcp_replay, pytestconfig):
                mock = mcp_replay("captures/root.jsonl")
                assert mock.capture == pytestconfig.rootpath / "captures/root.jsonl"

            def test_missing(mcp_replay):
                mcp_replay("captures/nope.jsonl")

            def test_absolute_missing(mcp_replay):
                mcp_replay(Path(__file__).parent / "gone.jsonl")

            def test_directory(mcp_replay):
                mcp_replay("captures")
            """
        }
    )
    result = inner(pytester)
    result.assert_outcomes(passed=2, failed=3)
    result.stdout.fnmatch_lines(["*mcp_replay: no capture 'captures/nope.jsonl': neither * nor *"])
    # Regression: one place tried said "neither", a directory "neither ... exists".
    result.stdout.fnmatch_lines(
        ["*mcp_replay: no capture '*gone.jsonl': *gone.jsonl does not exist"]
    )
    result.stdout.fnmatch_lines(
        ["*mcp_replay: capture 'captures': *suite/captures is a directory, not a capture"]
    )
    assert not [line for line in result.outlines if "gone.jsonl" in line and "neither" in line]


def test_replay_reports_what_the_capture_cannot_answer(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_miss=module(
            """
import urllib.request

META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}


def post(url, body):
    request = urllib.request.Request(
        url,
        data=json.dumps(body).encode(),
        headers={
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            "MCP-Protocol-Version": "2026-07-28",
        },
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.loads(response.read())


def weather(url, city):
    params = {"name": "get_weather", "arguments": {"city": city}, "_meta": META}
    return post(url, {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params})


def test_reported(mcp_replay):
    mock = mcp_replay(CAPTURES / "modern-http-sse.jsonl", "http")
    assert weather(mock.url, "Paris")["result"]["content"][0]["text"] == "Sunny in Paris"
    assert weather(mock.url, "London")["error"]["code"] == -32602
    assert len(mock.misses) == 1 and "recorded Paris, got London" in mock.misses[0]


def test_strict(mcp_replay):
    mock = mcp_replay(CAPTURES / "modern-http-sse.jsonl", "http", strict=True)
    weather(mock.url, "London")
"""
        )
    )
    result = inner(pytester)
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(
        [
            "*_ test_strict _*",
            "mcpeek: the client sent 1 request(s) the capture *modern-http-sse.jsonl has no "
            "answer for:",
            "  - no recorded tools/call matches; closest: *recorded Paris, got London",
        ]
    )


def test_bad_marker_options_are_errors(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        import pytest

        @pytest.mark.mcp_record(fail_on="fatal")
        def test_level(mcp_record):
            pass

        @pytest.mark.mcp_record(failon="error")
        def test_typo(mcp_record):
            pass

        @pytest.mark.mcp_record(ignore_rules=["no.such-rule"])
        def test_rule(mcp_record):
            pass
        """
    )
    result = inner(pytester)
    result.assert_outcomes(errors=3)
    result.stdout.fnmatch_lines_random(
        [
            "*fail_on='fatal': expected one of*",
            "*unknown option failon*",
            "*ignore_rules: no such rule no.such-rule*",
        ]
    )


def test_checks_read_a_capture_like_lint() -> None:
    found, directions = lint_capture(CAPTURES / "violations.jsonl")
    assert sorted({v.rule for v in found}) == BAD_SERVER_RULES
    assert client_side(found, directions.get) == []  # all the server's doing
    text = describe(found)
    assert "ERROR   tools.output-schema  (tools/call, id 3" in text
    assert "spec: https://modelcontextprotocol.io/specification/2026-07-28/" in text
    assert summary(found) == f"5 errors: {', '.join(BAD_SERVER_RULES)}"


# -- real processes ----------------------------------------------------------------------
@pytest.mark.e2e
def test_replay_serves_the_sdk_clients_on_stdio_and_http(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_replay=module(
            """
def test_stdio(mcp_replay):
    mock = mcp_replay(CAPTURES / "modern-stdio.jsonl", strict=True)
    outcome = run(PEERS / "sdk_client.py", "--era", "modern", "--", *mock.command)
    assert outcome["protocol_version"] == "2026-07-28"
    assert (outcome["add"], outcome["progress"], outcome["weather"]) == (5, 3, "Sunny in Paris")
    assert mock.violations == [] and mock.misses == []


def test_http(mcp_replay):
    mock = mcp_replay(CAPTURES / "modern-http-sse.jsonl", "http", strict=True)
    assert mock.url.startswith("http://127.0.0.1:") and mock.url.endswith("/mcp")
    outcome = run(PEERS / "sdk_http_client.py", "--era", "modern", "--url", mock.url)
    assert (outcome["add"], outcome["progress"]) == (5, 3)
    assert outcome["confirm"] == "confirmed: Proceed?"
    mock.stop()
    assert mock.violations == [] and mock.misses == []
"""
        )
    )
    result = outer(pytester)
    result.assert_outcomes(passed=2)


@pytest.mark.e2e
def test_replay_catches_a_client_that_reuses_a_request_id(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_reuse=module(
            """
def test_strict(mcp_replay):
    mock = mcp_replay(CAPTURES / "modern-stdio.jsonl", strict=True)
    outcome = run(PEERS / "reused_id_client.py", "--", *mock.command)
    assert outcome == {"answers": 3, "returncode": 0}


def test_asserting(mcp_replay):
    mock = mcp_replay(CAPTURES / "modern-stdio.jsonl")
    run(PEERS / "reused_id_client.py", "--", *mock.command)
    assert mock.rule_ids == ["id.reused"]
    assert mock.violations[0].method == "tools/call" and mock.violations[0].msg_id == 2
    with pytest.raises(AssertionError, match="id.reused"):
        mock.check()
"""
        )
    )
    result = outer(pytester)
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(
        [
            "*_ test_strict _*",
            "mcpeek: the client broke 1 rule(s) talking to the mock of *modern-stdio.jsonl*",
            "  ERROR   id.reused  (tools/call, id 2, *",
            "*request id 2 is still in flight from the client*",
            "*spec: https://modelcontextprotocol.io/specification/2026-07-28/basic/index#requests",
        ]
    )


@pytest.mark.e2e
def test_record_wraps_a_server_lints_and_fails_on_violations(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_servers=module(
            """
def test_sdk_server(mcp_record):
    argv = mcp_record.stdio([PY, PEERS / "sdk_server.py"])
    assert argv[1:5] == ["-I", "-m", "mcpeek", "stdio"]
    outcome = run(PEERS / "sdk_client.py", "--era", "modern", "--", *argv)
    assert outcome["add"] == 5


def test_bad_server(mcp_record):
    argv = mcp_record.stdio([PY, PEERS / "bad_server.py"])
    assert run(PEERS / "raw_client.py", "--", *argv)["answered"] == [1, 2, 3, 4, 5]
"""
        )
    )
    result = outer(pytester)
    result.assert_outcomes(passed=1, failed=1)
    captures = pytester.path / "captures" / "test_servers"
    good = captures / "test_sdk_server.jsonl"
    lint = subprocess.run(mcpeek_argv("lint", str(good)), capture_output=True, text=True)
    assert lint.returncode == 0, lint.stdout
    assert not (captures / "test_bad_server.jsonl").exists()  # a failed test saves nothing
    kept = captures / "test_bad_server.failed.jsonl"
    assert kept.exists()
    assert sorted(p.name for p in captures.iterdir()) == [
        "test_bad_server.failed.jsonl",
        "test_sdk_server.jsonl",
    ]
    result.stdout.fnmatch_lines(
        [
            "*_ test_bad_server _*",
            "mcpeek: the MCP traffic of this test broke 5 rule(s) at or above error "
            f"(5 errors: {', '.join(BAD_SERVER_RULES)}):",
            '  ERROR   notification.with-id  (notifications/tools/list_changed, id "n1", *',
            '*message: {"jsonrpc":"2.0","id":"n1",*',
            "*spec: https://modelcontextprotocol.io/specification/2026-07-28/*",
            f"capture: {kept} (not saved as test_bad_server.jsonl: the next run records again)",
        ]
    )
    for rule in BAD_SERVER_RULES:
        result.stdout.fnmatch_lines([f"  ERROR   {rule}  (*"])


MARKER_SERVER = """
import os
import sys
from pathlib import Path

with open(Path(__file__).parent / "starts.log", "a") as log:
    log.write("start\\n")
os.execv(sys.executable, [sys.executable, {server!r}])
"""


@pytest.mark.e2e
def test_record_modes_once_replays_none_needs_a_capture_all_records_again(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(
        marker_server=MARKER_SERVER.format(server=str(PEERS / "sdk_server.py")),
        test_modes=module(
            """
def test_conversation(mcp_record):
    argv = mcp_record.stdio([PY, Path(__file__).parent / "marker_server.py"])
    assert run(PEERS / "sdk_client.py", "--era", "modern", "--", *argv)["add"] == 5
"""
        ),
    )
    starts = pytester.path / "starts.log"
    capture = pytester.path / "captures" / "test_modes" / "test_conversation.jsonl"

    def started() -> int:
        return len(starts.read_text().splitlines()) if starts.exists() else 0

    def created() -> str:
        header: dict[str, str] = json.loads(capture.read_text().splitlines()[0])
        return header["created"]

    outer(pytester).assert_outcomes(passed=1)
    assert started() == 1 and capture.exists()  # once, no capture: recorded
    first = created()

    outer(pytester).assert_outcomes(passed=1)
    assert started() == 1  # once, with the capture: replayed, the server never ran
    assert created() == first

    outer(pytester, "--mcpeek-record=all").assert_outcomes(passed=1)
    assert started() == 2 and created() != first  # all: recorded again

    capture.unlink()
    result = outer(pytester, "--mcpeek-record=none")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(
        [
            "*ERROR at setup of test_conversation*",
            f"mcp_record: no capture {capture} to replay, and the record mode is 'none'*",
        ]
    )
    assert started() == 2


@pytest.mark.e2e
def test_record_over_http_then_replay(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_http=module(
            """
@pytest.fixture
def upstream():
    proc = subprocess.Popen(
        [PY, PEERS / "sdk_http_server.py", "--port", "0"], stderr=subprocess.PIPE, text=True
    )
    for line in proc.stderr:
        if "listening on" in line:
            break
    yield line.split("listening on", 1)[1].strip()
    proc.terminate()
    proc.wait(10)


def test_legacy(mcp_record, upstream):
    replaying = mcp_record.replaying
    url = mcp_record.http(upstream)
    assert url != upstream and url.endswith("/mcp")
    outcome = run(PEERS / "sdk_http_client.py", "--era", "legacy", "--url", url)
    assert (outcome["add"], outcome["confirm"]) == (5, "confirmed: Proceed?")
    print("REPLAYED" if replaying else "RECORDED")
"""
        )
    )
    result = outer(pytester, "-s")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["*RECORDED*"])
    capture = pytester.path / "captures" / "test_http" / "test_legacy.jsonl"
    assert json.loads(capture.read_text().splitlines()[0])["transport"] == "http"
    result = outer(pytester, "-s")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["*REPLAYED*"])
