"""Redaction of the recorded copy: one test per kind of secret, through the writer."""

from __future__ import annotations

import json
from pathlib import Path

import msgspec
import pytest

from mcpeek.inspector.capture import CaptureWriter, read_records
from mcpeek.inspector.capture.redact_rules import MARKER_PREFIX, marker
from mcpeek.inspector.capture.redact_text import redact_url_params
from mcpeek.inspector.clients.remote import shown_url
from mcpeek.inspector.records import Act, Http, Msg, SeqRecord, Stderr, wire_bytes

# Made-up credentials of the shapes the detector knows (none of them is real).
AWS_KEY = "AKIAIOSFODNN7EXAMPLE"
GITHUB_TOKEN = "ghp_" + "A1b2C3d4E5" * 3 + "F6g7H8"
SLACK_TOKEN = "xoxb-1234567890-0987654321-abcdefghijklmnop"
JWT = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NSJ9.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
STRIPE_KEY = "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc"
PRIVATE_KEY = (
    "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0t\n"
    "-----END RSA PRIVATE KEY-----"
)
# The two shapes found by patterns without a literal (see redact_detect._SHAPES).
DISCORD_TOKEN = "MTAxNTk4NDUzNjYyODE2NjY0Ng.GhJkLm." + "abcdefghijklmnopqrstuvwxyzA"
TELEGRAM_TOKEN = "123456789:" + "AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw8"
JSON_SECRETS = [
    AWS_KEY,
    GITHUB_TOKEN,
    SLACK_TOKEN,
    JWT,
    STRIPE_KEY,
    PRIVATE_KEY,
    DISCORD_TOKEN,
    TELEGRAM_TOKEN,
]


def recorded(tmp_path: Path, *records: SeqRecord, redact: bool = True) -> tuple[list, bytes]:
    path = tmp_path / "cap.jsonl"
    with CaptureWriter(
        path, transport="http", target="http://u/mcp", redact=redact, force=True
    ) as writer:
        for record in records:
            writer.write(record)
    header, out, problems = read_records(path)
    assert problems == []
    return [header, *out], path.read_bytes()


def message(value: object) -> Msg:
    return Msg(dir="c2s", ch="x1", raw=json.dumps(value))


def decoded(record: Msg) -> object:
    return msgspec.json.decode(wire_bytes(record))


def test_query_parameters_named_like_credentials(tmp_path: Path) -> None:
    target = "/mcp?api_key=K1&access_token=T2&token=T3&key=K4&code=C5&client_secret=S6&page=2"
    (_, request), data = recorded(tmp_path, Http(x="x1", phase="request", path=target))
    assert b"K1" not in data and b"S6" not in data
    for secret in ("K1", "T2", "T3", "K4", "C5", "S6"):
        assert f"={secret}" not in request.path
        assert marker(secret) in request.path
    assert request.path.startswith("/mcp?api_key=") and request.path.endswith("&page=2")


def test_query_parameters_parted_by_semicolons_or_named_loosely(tmp_path: Path) -> None:
    """A ";" parts parameters as "&" does (as a header URL's are read), a name is read
    without the spaces around it, and "pass" and "pw" are a password's names."""
    target = "/mcp?a=1;access_token=T1&code%20=C2&pass=P3;P4&pw=P5&page=2"
    form = "grant_type=password&password=p4ss;w0rd"  # a form's parameters part by "&" only
    records = [
        Http(x="x1", phase="request", path=target),
        Http(x="x2", phase="request", method="POST", path="/token", body=form),
    ]
    (_, request, token_request), data = recorded(tmp_path, *records)
    assert b"T1" not in data and b"P4" not in data and b"w0rd" not in data
    assert request.path == (
        f"/mcp?a=1;access_token={marker('T1')}&code%20={marker('C2')}"
        f"&pass={marker('P3;P4')}&pw={marker('P5')}&page=2"
    )
    assert token_request.body == f"grant_type=password&password={marker('p4ss;w0rd')}"


def test_parameters_that_describe_a_token_are_kept(tmp_path: Path) -> None:
    """A token's type, lifetime or kind is named like a credential but is none: the
    token beside it is redacted, they are not; a secret pattern still replaces a
    secret given in one, and other names ending in "type" stay hidden."""
    target = (
        "/cb?Token-Type-Hint=refresh_token&token=T1&refresh_token_expires_in=86400"
        "&subject_token=T2&subject_token_type=urn:ietf:params:oauth:token-type:jwt"
        f"&secret_type=S3&api_key_type=K4&token_type={JWT}"
    )
    form = "access_token=T5&token_type=bearer&expires_in=3600"
    records = [
        Http(x="x1", phase="request", path=target),
        Http(x="x2", phase="response", body=form),
    ]
    (_, request, response), data = recorded(tmp_path, *records)
    kept, _, last = request.path.rpartition("&")
    assert kept == (
        f"/cb?Token-Type-Hint=refresh_token&token={marker('T1')}&refresh_token_expires_in=86400"
        f"&subject_token={marker('T2')}&subject_token_type=urn:ietf:params:oauth:token-type:jwt"
        f"&secret_type={marker('S3')}&api_key_type={marker('K4')}"
    )
    assert MARKER_PREFIX in last and "eyJ" not in last  # the JWT, by its pattern
    assert JWT.encode() not in data
    assert response.body == f"access_token={marker('T5')}&token_type=bearer&expires_in=3600"
    fragment = "https://app.example/cb#access_token=T6&token_type=Bearer"
    assert redact_url_params(fragment) == (
        f"https://app.example/cb#access_token={marker('T6')}&token_type=Bearer"
    )
    # The command mcpeek suggests for a remote server hides the same parameters.
    shown = shown_url("https://mcp.example/mcp?token_type=Bearer&api_key_type=K7&key=K8")
    assert "token_type=Bearer" in shown and "K7" not in shown and "K8" not in shown


@pytest.mark.parametrize("form", [True, False])
def test_oauth_token_endpoint_bodies(tmp_path: Path, form: bool) -> None:
    fields = {
        "grant_type": "authorization_code",
        "code": "SplxlOBeZQQYbYS6WxSbIA",
        "code_verifier": "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk",
        "client_secret": "s3cr3t-value",
        "redirect_uri": "http://127.0.0.1:3000/callback",
    }
    answer = {"access_token": "at-1", "refresh_token": "rt-2", "id_token": "it-3"}
    if form:
        body = "&".join(f"{k}={v}" for k, v in fields.items())
        records = [Http(x="x1", phase="request", method="POST", path="/token", body=body)]
    else:
        records = [message(fields)]
    records.append(Msg(dir="s2c", ch="x1", raw=json.dumps(answer)))
    _, data = recorded(tmp_path, *records)
    for secret in (fields["code"], fields["code_verifier"], fields["client_secret"], "at-1"):
        assert secret.encode() not in data
    assert b"rt-2" not in data and b"it-3" not in data
    assert b"authorization_code" in data and b"callback" in data  # not credentials


def test_credential_headers_by_name_but_not_the_session_id(tmp_path: Path) -> None:
    headers = [
        ("X-Auth-Token", "v1"),
        ("Api-Key", "v2"),
        ("X-Goog-Api-Key", "v3"),
        ("X-Client-Secret", "v4"),
        ("X-Password", "v5"),
        ("Authorization", "Bearer v6"),
        ("Mcp-Session-Id", "session-7"),
        ("Content-Type", "application/json"),
        ("X-Trace", f"carries {GITHUB_TOKEN}"),
    ]
    (_, request), _ = recorded(tmp_path, Http(x="x1", phase="request", headers=headers))
    values = dict(request.headers)
    for name in ("x-auth-token", "api-key", "x-goog-api-key", "x-client-secret", "x-password"):
        assert values[name].startswith(MARKER_PREFIX)
    assert values["authorization"] == marker("Bearer v6")
    assert values["mcp-session-id"] == "session-7"  # routing state replay needs
    assert values["content-type"] == "application/json"
    assert values["x-trace"] == f"carries {marker(GITHUB_TOKEN)}"


@pytest.mark.parametrize("secret", JSON_SECRETS, ids=lambda s: s[:12])
def test_each_recognisable_secret_inside_a_json_rpc_message(tmp_path: Path, secret: str) -> None:
    text = f"here it is: {secret} (keep it safe)"
    result = {"jsonrpc": "2.0", "id": 3, "result": {"content": [{"type": "text", "text": text}]}}
    (_, msg), data = recorded(tmp_path, message(result))
    assert json.dumps(secret)[1:-1].encode() not in data
    value = decoded(msg)
    assert value["result"]["content"][0]["text"] == f"here it is: {marker(secret)} (keep it safe)"
    assert {k: value[k] for k in ("jsonrpc", "id")} == {"jsonrpc": "2.0", "id": 3}


def test_password_fields_nested_in_tool_arguments(tmp_path: Path) -> None:
    call = {
        "jsonrpc": "2.0",
        "id": "call-1",
        "method": "tools/call",
        "params": {
            "name": "connect",
            "arguments": {"db": {"user": "bob", "password": "hunter2", "apiKey": "k-9"}},
            "_meta": {"progressToken": "progress-1"},
        },
    }
    (_, msg), data = recorded(tmp_path, message(call))
    assert b"hunter2" not in data and b"k-9" not in data
    value = decoded(msg)
    assert value["params"]["arguments"]["db"] == {
        "user": "bob",
        "password": marker("hunter2"),
        "apiKey": marker("k-9"),
    }
    # Correlation is untouched: id, method and the progress token are as sent.
    assert value["id"] == "call-1" and value["method"] == "tools/call"
    assert value["params"]["_meta"] == {"progressToken": "progress-1"}


def test_structural_members_are_kept_even_when_they_look_like_secrets(tmp_path: Path) -> None:
    note = {"jsonrpc": "2.0", "method": "notifications/progress"}
    note["params"] = {"progressToken": AWS_KEY, "progress": 1}
    retry = {"jsonrpc": "2.0", "id": JWT, "method": "tools/call"}
    retry["params"] = {"name": "x", "requestState": JWT, "inputResponses": {}}
    (_, *msgs), _ = recorded(tmp_path, message(note), message(retry))
    assert [wire_bytes(m) for m in msgs] == [json.dumps(note).encode(), json.dumps(retry).encode()]


def test_untouched_messages_keep_their_exact_bytes(tmp_path: Path) -> None:
    raw = '{"jsonrpc":"2.0", "id":1,\t"result":{"tools":[],"nextCursor":"abcdefghijklmnopqrstu"}}'
    (_, msg), _ = recorded(tmp_path, Msg(dir="s2c", ch="stdio", raw=raw))
    assert msg.raw == raw


def test_escaped_strings_stay_valid_json(tmp_path: Path) -> None:
    text = f'quote " and caf\u00e9 then {AWS_KEY}\n'
    raw = json.dumps({"jsonrpc": "2.0", "id": 1, "result": {"text": text}})
    (_, msg), _ = recorded(tmp_path, Msg(dir="s2c", ch="stdio", raw=raw))
    assert decoded(msg) == {
        "jsonrpc": "2.0",
        "id": 1,
        "result": {"text": text.replace(AWS_KEY, marker(AWS_KEY))},
    }


def test_server_stderr_lines(tmp_path: Path) -> None:
    (_, line), data = recorded(tmp_path, Stderr(raw=f"connecting with {AWS_KEY}"))
    assert AWS_KEY.encode() not in data
    assert line.raw == f"connecting with {marker(AWS_KEY)}"


def test_no_redact_keeps_everything_and_the_header_says_what_ran(tmp_path: Path) -> None:
    secret_call = message({"jsonrpc": "2.0", "id": 1, "params": {"password": "hunter2"}})
    request = Http(x="x1", phase="request", path="/mcp?token=T", headers=[("X-Api-Key", "k")])
    (header, *_), data = recorded(tmp_path, secret_call, request, redact=False)
    assert b"hunter2" in data and b"token=T" in data and b'"k"' in data
    assert header.redacted is False and header.redaction is None
    (header, *_), data = recorded(tmp_path, secret_call, request)
    assert header.redacted is True and header.redaction is not None
    assert {"header", "query", "form-body", "json-field", "secret-pattern"} <= set(
        header.redaction.kinds
    )
    assert header.redaction.detector.startswith("detect-secrets ")


def test_secrets_in_a_long_message_beside_a_base64_blob(tmp_path: Path) -> None:
    # Long texts are scanned window by window around their token runs, and a
    # blob too long to hold a recognisable secret is skipped: neither may hide
    # the secrets around it.
    blob = "iVBORw0KGgoAAAANSUhEUgAA" * 2000
    filler = "lorem ipsum dolor sit amet " * 400
    content = [
        {"type": "image", "data": blob, "mimeType": "image/png"},
        {"type": "text", "text": f"{filler} token {GITHUB_TOKEN} {filler} {JWT} end"},
        {"type": "text", "text": "signed in", "_meta": {"login": {"password": "hunter2"}}},
    ]
    result = {"jsonrpc": "2.0", "id": 9, "result": {"content": content}}
    (_, msg), data = recorded(tmp_path, message(result))
    assert len(msg.raw) > 64 * 1024  # the size where only member names are searched
    assert GITHUB_TOKEN.encode() not in data and JWT.encode() not in data
    assert b"hunter2" not in data
    value = decoded(msg)
    assert value["result"]["content"][0]["data"] == blob
    assert value["result"]["content"][1]["text"] == (
        f"{filler} token {marker(GITHUB_TOKEN)} {filler} {marker(JWT)} end"
    )


@pytest.mark.parametrize("filler", ["", "lorem ipsum dolor sit amet " * 400], ids=["short", "long"])
def test_a_password_in_a_url_short_or_long_text(tmp_path: Path, filler: str) -> None:
    # Its only sign is "://...@": no run of token characters announces it.
    text = f"{filler} see postgres://alice:s3cr3tpass@db.example/app {filler}"
    result = {"jsonrpc": "2.0", "id": 4, "result": {"content": [{"type": "text", "text": text}]}}
    (_, msg), data = recorded(tmp_path, message(result))
    assert b"s3cr3tpass" not in data
    assert "postgres://alice:<redacted sha256:" in decoded(msg)["result"]["content"][0]["text"]


def test_the_original_an_act_record_keeps_is_redacted_like_its_message(tmp_path: Path) -> None:
    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"password": "hunter2"}}
    act = Act(action="drop", dir="c2s", ch="x1", by="fault", rule="~a => drop")
    act.raw = json.dumps(call)
    (_, kept), data = recorded(tmp_path, act)
    assert b"hunter2" not in data
    assert json.loads(kept.raw)["params"]["password"] == marker("hunter2")


def test_a_credential_named_twice_has_both_values_redacted(tmp_path: Path) -> None:
    # A decoded object keeps a name's last value only: the first was left in the
    # capture as sent.
    raw = '{"jsonrpc":"2.0","id":1,"method":"x","params":{"password":"first","password":"last"}}'
    (_, msg), data = recorded(tmp_path, Msg(dir="c2s", ch="x1", raw=raw))
    assert b"first" not in data and b"last" not in data
    assert (
        wire_bytes(msg)
        == raw.replace('"first"', json.dumps(marker("first")))
        .replace('"last"', json.dumps(marker("last")))
        .encode()
    )


def test_a_message_nested_too_deeply_to_decode_is_recorded_and_its_password_redacted(
    tmp_path: Path,
) -> None:
    # msgspec refuses to decode it (RecursionError): the whole batch used to be lost.
    deep = "[" * 2000 + "]" * 2000
    params = f'{{"password":"hunter2","a":{deep},"progressToken":"p-1"}}'
    raw = f'{{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{params}}}'
    ping = Msg(dir="c2s", ch="x1", raw='{"jsonrpc":"2.0","id":3,"method":"ping"}')
    (_, msg, after), data = recorded(tmp_path, Msg(dir="c2s", ch="x1", raw=raw), ping)
    assert b"hunter2" not in data
    assert wire_bytes(msg) == raw.replace('"hunter2"', json.dumps(marker("hunter2"))).encode()
    assert wire_bytes(after) == wire_bytes(ping)


def test_credentials_in_the_urls_of_header_values(tmp_path: Path) -> None:
    """A redirect's Location carries an OAuth code or a token, a Referer or a Link a
    key, in a query or a fragment: their values are replaced as a target's are."""
    code = "SplxlOBeZQQYbYS6WxSbIA"
    headers = [
        ("Location", f"https://app.example/cb?code={code}&state=xyz"),
        ("Content-Location", "https://app.example/cb#access_token=eyJabc.def&expires_in=3600"),
        ("Referer", "https://app.example/x?page=2&api_key=k-123"),
        ("Link", '<https://api.example/items?page=2&token=t-9>; rel="next"'),
        ("X-Next", "https://app.example/items?page=2&sort=asc"),
        # Read as a request target's: a ";" in a secret stays hidden, one parts parameters.
        ("X-Callback", "https://app.example/cb?password=p4ss;w0rd&x=1;token=t1"),
    ]
    (_, response), data = recorded(tmp_path, Http(x="x1", phase="response", headers=headers))
    values = dict(response.headers)
    assert values["location"] == f"https://app.example/cb?code={marker(code)}&state=xyz"
    assert values["content-location"] == (
        f"https://app.example/cb#access_token={marker('eyJabc.def')}&expires_in=3600"
    )
    assert values["referer"] == f"https://app.example/x?page=2&api_key={marker('k-123')}"
    assert values["link"] == f'<https://api.example/items?page=2&token={marker("t-9")}>; rel="next"'
    assert values["x-next"] == "https://app.example/items?page=2&sort=asc"  # nothing to hide
    assert values["x-callback"] == (
        f"https://app.example/cb?password={marker('p4ss;w0rd')}&x=1;token={marker('t1')}"
    )
    assert code.encode() not in data and b"k-123" not in data and b"t-9>" not in data
