"""Bad command-line arguments, beyond test_bad_input.py: one line ``mcpeek: ...``
naming the option, exit 2, before anything is opened or listened on."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from mcpeek.inspector.cli.main import main
from mcpeek.inspector.filters import FilterError, compile_filter, filter_rows
from mcpeek.inspector.testing.records import RecordBuilder
from mcpeek.inspector.views.session import SessionModel
from tests.conftest import mcpeek_argv

CAPTURE = Path(__file__).resolve().parents[3] / "captures" / "modern-stdio.jsonl"
HTTP = ["http", "--no-tui", "--upstream", "http://127.0.0.1:1/mcp"]


@pytest.mark.parametrize(
    ("words", "option", "value"),
    [
        (["serve", str(CAPTURE), "--listen"], "--listen", "127.0.0.1:²"),
        ([*HTTP, "--listen"], "--listen", "¹²"),
        (["mcp", "--http"], "--http", "127.0.0.1:²"),
    ],
)
def test_a_listen_port_in_digits_that_are_not_ascii_names_the_option(
    words: list[str], option: str, value: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """str.isdigit() takes "²", int() refuses it: the message was int()'s own,
    "invalid literal for int() with base 10: '²'", naming no option."""
    assert main([*words, value]) == 2
    err = capsys.readouterr().err
    assert err == f"mcpeek: {option} {value!r}: expected HOST:PORT with a port from 0 to 65535\n"


# Each with a refusal after the URL's check: a version that took the URL stops there,
# with another message, instead of proxying, replaying or serving.
@pytest.mark.parametrize(
    ("words", "option", "stop"),
    [
        ([*HTTP[:2], "--upstream"], "--upstream", ["--header-timeout", "0"]),
        (["replay", str(CAPTURE), "--url"], "--url", ["--timeout", "0"]),
        (["serve", str(CAPTURE), "--forward"], "--forward", ["--listen", "nope"]),
    ],
)
@pytest.mark.parametrize("control", ["\n", "\r\n", "\t", "\x00", "\x7f"])
def test_a_server_url_with_a_control_character_is_refused(
    words: list[str],
    option: str,
    stop: list[str],
    control: str,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """urlsplit() drops tabs and line ends unsaid: http proxied (to the URL without
    them) and printed the URL on two lines; replay tried to reach it."""
    url = f"http://127.0.0.1:1/m{control}cp"
    assert main([*words, url, *stop]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"mcpeek: {option} {url!r} holds the control character")
    assert err.count("\n") == 1


@pytest.mark.parametrize("value", ["[::1:8080", "::1]:8080", "[127.0.0.1:8080"])
def test_a_listen_address_with_an_unclosed_bracket_is_no_host_port(
    value: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """'[::1:8080' was taken as [::1]:8080 (with --allow-remote), or refused as "not
    a loopback address" when it was one mistyped."""
    words = ["http", "--no-tui", "--listen", value, "--allow-remote", "--upstream", "nope"]
    assert main(words) == 2  # (an --upstream refused after --listen: never proxies)
    err = capsys.readouterr().err
    assert err == f"mcpeek: --listen {value!r}: expected HOST:PORT with a port from 0 to 65535\n"


@pytest.mark.parametrize(
    "words",
    [
        ["http", "--no-tui", "--home", "", "--upstream", "nope"],
        ["wrap", "claude-desktop", "--dry-run", "--home", "", "--http", "0"],
        ["mcp", "--home", "", "--http", "nope"],
    ],  # (each with a refusal after --home: a version that took it stops there)
)
def test_an_empty_home_is_refused_not_taken_for_the_working_directory(
    words: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    """``--home "$DIR"`` with DIR unset: Path("") is ".", so captures went to the
    working directory (wrap wrote it into the client's config, mcp served it)."""
    with pytest.raises(SystemExit) as stopped:
        main(words)
    assert stopped.value.code == 2
    assert capsys.readouterr().err.endswith("argument --home: an empty name is no directory\n")


def test_stdio_with_an_empty_home_records_nothing_in_the_working_directory(
    tmp_path: Path,
) -> None:
    proc = subprocess.run(
        mcpeek_argv("stdio", "--home", "", "--", "true"),
        cwd=tmp_path,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2
    assert proc.stderr.endswith("argument --home: an empty name is no directory\n")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("words", "option"),
    [
        (["-H", "Authorization: Bearer x"], "--header"),
        (["--send-credentials"], "--send-credentials"),
    ],
)
def test_replay_to_a_stdio_server_refuses_what_only_http_sends(
    words: list[str], option: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """They were dropped unsaid: the replay ran without the header the user gave.
    (A capture that is not there: a version that took them stops at it, unreplayed.)"""
    assert main(["replay", str(tmp_path / "gone.jsonl"), *words, "--", "true"]) == 2
    err = capsys.readouterr().err
    assert err == f"mcpeek: {option} goes with --url: a stdio server gets no HTTP headers\n"


@pytest.mark.parametrize(
    ("words", "option", "stop"),
    [
        ([*HTTP[:2], "--upstream"], "--upstream", ["--header-timeout", "0"]),
        (["replay", str(CAPTURE), "--url"], "--url", ["--timeout", "0"]),
        (["serve", str(CAPTURE), "--forward"], "--forward", ["--listen", "nope"]),
    ],
)
@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("http://\udcff/mcp", "'http://\\xff/mcp'"),
        # (yarl drops it from a path unsaid: the URL used would not be the one given)
        ("http://127.0.0.1:1/m\udcffcp", "'http://127.0.0.1:1/m\\xffcp'"),
        ("http://u:p\udcff@127.0.0.1:1/mcp", "'http://u:<redacted>@127.0.0.1:1/mcp'"),
    ],
)
def test_a_server_url_with_a_byte_that_is_not_utf8_is_refused_readably(
    words: list[str],
    option: str,
    stop: list[str],
    url: str,
    shown: str,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Such bytes come in argv as lone surrogates (surrogateescape): replay tried the
    URL and printed "cannot reach http://\\udcff/mcp", http proxied to it. The byte is
    shown as bytes are (\\xff), the way the option's other refusals show the URL."""
    assert main([*words, url, *stop]) == 2
    err = capsys.readouterr().err
    assert err == (
        f"mcpeek: {option} {shown} holds the byte \\xff, which is not UTF-8: "
        "percent-encode it (%FF)\n"
    )


def test_a_replay_url_not_utf8_on_the_real_command_line_prints_no_surrogate() -> None:
    argv = [os.fsencode(word) for word in mcpeek_argv("replay", str(CAPTURE), "--url")]
    proc = subprocess.run(
        [*argv, b"http://\xff/mcp"], capture_output=True, stdin=subprocess.DEVNULL, timeout=60
    )
    assert proc.returncode == 2
    assert proc.stderr == (
        b"mcpeek: --url 'http://\\xff/mcp' holds the byte \\xff, which is not UTF-8: "
        b"percent-encode it (%FF)\n"
    )


def test_wrap_leaves_a_server_that_already_runs_mcpeek_stdio_and_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Written by hand without ``--`` or as ``python -m mcpeek`` (without wrap's
    ``-I``), such an entry was not seen as wrapped: wrap put a second mcpeek stdio in
    front of it (two captures of every message). Unwrap then leaves the one without
    ``--`` as it is (where its server's command begins is stdio's to say), and takes
    ``-m mcpeek`` off the other as off a wrapper that runs an ``mcpeek`` executable."""
    config = tmp_path / "mcp.json"
    servers = {
        "bare": {"command": "mcpeek", "args": ["stdio", "-q", "srv", "1"]},
        "module": {"command": "python3", "args": ["-m", "mcpeek", "stdio", "--", "srv"]},
        "plain": {"command": "npx", "args": ["-y", "weather"]},
    }
    config.write_text(json.dumps({"mcpServers": servers}, indent=2), encoding="utf-8")
    assert main(["wrap", "cursor", "--config", str(config)]) == 0
    err = capsys.readouterr().err
    assert "mcpeek: left bare (mcpServers) as it is: it runs mcpeek stdio already\n" in err
    assert "mcpeek: module (mcpServers) is already wrapped\n" in err
    assert "mcpeek: wrapped plain (mcpServers)\n" in err
    wrapped = json.loads(config.read_text(encoding="utf-8"))["mcpServers"]
    assert wrapped["bare"] == servers["bare"] and wrapped["module"] == servers["module"]
    assert wrapped["plain"]["args"][-4:] == ["--", "npx", "-y", "weather"]
    assert main(["wrap", "--list", "cursor", "--config", str(config)]) == 0
    listed = dict(line.split(maxsplit=1) for line in capsys.readouterr().out.splitlines())
    assert listed["bare"] == "stdio  runs mcpeek stdio already, not as wrap writes it"
    assert listed["module"] == "stdio  wrapped"
    assert main(["unwrap", "cursor", "--config", str(config)]) == 0
    unwrapped = json.loads(config.read_text(encoding="utf-8"))["mcpServers"]
    assert unwrapped["bare"] == servers["bare"] and unwrapped["plain"] == servers["plain"]
    assert unwrapped["module"] == {"command": "srv", "args": []}


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        ("~k request|notification", [0, 1]),
        ("~k Response|NOTIFICATION", [1]),  # (the request's flow: no match)
        ("~k response|response", []),
        ("~s ok|unanswered", [0]),  # the same form, the same code
    ],
)
def test_a_kind_filter_takes_alternatives_as_a_status_filter_does(
    text: str, kept: list[int]
) -> None:
    """``~s a|b`` was taken, ``~k a|b`` refused ("~k wants request or response or
    notification"): a --fault on requests and notifications needed two ~k."""
    b = RecordBuilder()
    b.request("tools/list", id=1)
    b.result(1, {"tools": []})
    b.notify("notifications/tools/list_changed")
    model = SessionModel("kinds.jsonl")
    model.feed(b.records)
    model.finish()
    assert list(filter_rows(compile_filter(text), model.items)) == kept


def test_a_kind_filter_names_the_alternative_it_does_not_know() -> None:
    with pytest.raises(FilterError) as caught:
        compile_filter("~k request|answer")
    assert str(caught.value) == (
        "~k wants request or response or notification at column 4; got 'answer'"
    )
