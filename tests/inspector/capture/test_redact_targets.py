"""What a capture's header records of its target: the upstream URL, the server command."""

from __future__ import annotations

from pathlib import Path

import pytest

from mcpeek.inspector.capture import CaptureWriter, read_records
from mcpeek.inspector.capture.redact_rules import marker
from mcpeek.inspector.capture.redact_targets import redact_command, redacted_url

KEY = "AKIAIOSFODNN7EXAMPLE"


@pytest.mark.parametrize(
    ("given", "recorded"),
    [
        (
            ["python3", "srv.py", "--token=hunter2"],
            ["python3", "srv.py", f"--token={marker('hunter2')}"],
        ),
        (
            ["srv", "--api-key", KEY, "--port", "9"],
            ["srv", "--api-key", marker(KEY), "--port", "9"],
        ),
        (["srv", "--password", "pw1", "-v"], ["srv", "--password", marker("pw1"), "-v"]),
        (["env", "GITHUB_TOKEN=ghp-1", "srv"], ["env", f"GITHUB_TOKEN={marker('ghp-1')}", "srv"]),
        (
            [
                "npx",
                "mcp-remote",
                "https://h/mcp?api_key=k1&x=2",
                "--header",
                "Authorization: Bearer t1",
            ],
            [
                "npx",
                "mcp-remote",
                f"https://h/mcp?api_key={marker('k1')}&x=2",
                "--header",
                f"Authorization: {marker('Bearer t1')}",
            ],
        ),
        (["srv", "--url=https://u:pw@h/mcp"], ["srv", "--url=https://u:<redacted>@h/mcp"]),
    ],
)
def test_credentials_in_a_server_command_are_replaced(
    given: list[str], recorded: list[str]
) -> None:
    assert redact_command(given) == recorded


@pytest.mark.parametrize(
    ("given", "recorded"),
    [
        (
            ["srv", "--auth", "T1", "--pass", "P2"],
            ["srv", "--auth", marker("T1"), "--pass", marker("P2")],
        ),
        (["srv", "--token", "-x1"], ["srv", "--token", marker("-x1")]),  # a value may start with -
        (["srv", "--password=my pass"], ["srv", f"--password={marker('my pass')}"]),
        (["sh", "-c", "server --token t2 -v"], ["sh", "-c", f"server --token {marker('t2')} -v"]),
        (
            ["srv", "--token=<redacted sha256:12345678>"],
            ["srv", "--token=<redacted sha256:12345678>"],
        ),
    ],
)
def test_more_credential_options(given: list[str], recorded: list[str]) -> None:
    assert redact_command(given) == recorded


def test_a_json_config_given_as_an_argument() -> None:
    """``--config '{…}'`` (as Smithery's CLI takes one): its members named like
    credentials, at any depth; JSON without one, and text that is not JSON, as given."""
    config = '{"debug": false, "apiKey": "T1", "nested": {"token": "T2"}, "items": [1]}'
    assert redact_command(["srv", "--config", config, '--config2=[{"password": "P3"}]']) == [
        "srv",
        "--config",
        f'{{"debug":false,"apiKey":"{marker("T1")}","nested":{{"token":"{marker("T2")}"}},"items":[1]}}',
        f'--config2=[{{"password":"{marker("P3")}"}}]',
    ]
    kept = ["srv", '{"debug": true}', "{not json", "[1, 2]"]
    assert redact_command(kept) == kept


@pytest.mark.parametrize(
    "command",
    [
        ["python", "server.py", "--port", "8000", "--log-level", "debug"],
        ["srv", "--no-auth", "config.json"],  # a flag with no value of its own
        ["srv", "--token", "--verbose"],  # no value follows
        ["srv", "--key-file=/etc/k.pem", "--auth-type", "oauth", "--keyword=foo"],
        ["ghcr.io/acme/oauth-mcp:latest", "--host", "keycloak:8080", "tokens:list"],
        ["node", "dist/index.js", "Accept: text/html", "x=1", "a description"],
    ],
)
def test_a_command_without_credentials_is_kept(command: list[str]) -> None:
    assert redact_command(command) == command


def test_an_upstream_url_loses_its_password_and_secret_parameters() -> None:
    url = (
        "https://al:pw@mcp.example/mcp?api_key=k1&token_type=Bearer;access_token=t2&page=2#code=c3"
    )
    assert redacted_url(url) == (
        f"https://al:<redacted>@mcp.example/mcp?api_key={marker('k1')}&token_type=Bearer"
        f";access_token={marker('t2')}&page=2#code={marker('c3')}"
    )
    # A ";" in a secret stays hidden with it; path parameters; a token as user name.
    assert redacted_url("http://h/mcp?password=p4ss;w0rd&x=1") == (
        f"http://h/mcp?password={marker('p4ss;w0rd')}&x=1"
    )
    assert redacted_url("http://h/mcp;api_key=S1") == f"http://h/mcp;api_key={marker('S1')}"
    assert (
        redacted_url("https://ghp_T@github.com/mcp") == f"https://{marker('ghp_T')}@github.com/mcp"
    )
    assert redacted_url("http://127.0.0.1:8000/mcp") == "http://127.0.0.1:8000/mcp"
    assert redacted_url("http://[::1]:8/mcp?page=2#top") == "http://[::1]:8/mcp?page=2#top"


@pytest.mark.parametrize("redact", [True, False])
def test_the_capture_header_records_the_target_redacted(tmp_path: Path, redact: bool) -> None:
    """With redaction on, the header's target is redacted; off, a URL still loses its
    password (never recorded) and a command is kept as given."""
    url = "http://al:pw@127.0.0.1:9/mcp?api_key=k1"
    command = ["srv", "--token=t1"]
    for name, target in (("u.jsonl", url), ("c.jsonl", command)):
        path = tmp_path / name
        with CaptureWriter(path, transport="http", target=target, redact=redact):
            pass
        header, _, problems = read_records(path)
        assert problems == []
        if isinstance(target, str):
            expected = "http://al:<redacted>@127.0.0.1:9/mcp?api_key=" + (
                marker("k1") if redact else "k1"
            )
        else:
            expected = ["srv", f"--token={marker('t1')}" if redact else "--token=t1"]
        assert header.target == expected
        assert b"pw" not in path.read_bytes()
