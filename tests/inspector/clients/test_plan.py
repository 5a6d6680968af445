"""Wrapping and unwrapping the text of each client's sample config (tests/data/clients).

The samples follow each client's documented format, with what real files
hold besides servers: unknown keys, odd indentation, tabs, and (VS Code,
Cursor) comments and trailing commas.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mcpeek.inspector.clients.entries import MODULE_PREFIX
from mcpeek.inspector.clients.jsonc import Object, parse
from mcpeek.inspector.clients.known import CLIENTS, client_named
from mcpeek.inspector.clients.plan import ConfigError, plan_unwrap, plan_wrap, survey
from tests.inspector.clients.values import plain

SAMPLES = Path(__file__).parents[2] / "data" / "clients"
PYTHON = "/opt/py/bin/python3"
LAUNCHER = [*MODULE_PREFIX, "stdio", "--"]
#: The clients with a sample (the -project/-user variants share their format).
SAMPLE_CLIENTS = ["claude-desktop", "claude-code", "claude-code-user", "cursor", "vscode"]


def sample(name: str) -> str:
    return (SAMPLES / f"{name}.json").read_text(encoding="utf-8")


def servers_of(text: str, name: str) -> dict[str, dict[str, object]]:
    """Every server entry in the config, keyed by table label and server name."""
    client = client_named(name)
    assert client is not None
    root = parse(text, jsonc=client.jsonc)
    assert isinstance(root, Object)
    return {
        f"{label}/{server.key}": plain(server.value)  # type: ignore[misc]
        for label, table in client.tables(root)
        for server in table.value.members  # type: ignore[union-attr]
    }


@pytest.mark.parametrize("name", SAMPLE_CLIENTS)
def test_wrap_then_unwrap_gives_back_every_byte(name: str) -> None:
    client = client_named(name)
    assert client is not None
    original = sample(name)
    wrapped = plan_wrap(original, client, add_inspector=True, python=PYTHON)
    assert wrapped.text != original and wrapped.changes
    assert plan_unwrap(wrapped.text, client, state=wrapped.state).text == original


@pytest.mark.parametrize("name", SAMPLE_CLIENTS)
def test_wrapping_twice_changes_nothing(name: str) -> None:
    client = client_named(name)
    assert client is not None
    once = plan_wrap(sample(name), client, add_inspector=True, python=PYTHON)
    twice = plan_wrap(once.text, client, add_inspector=True, python=PYTHON, state=once.state)
    assert twice.text == once.text and twice.changes == [] and twice.state == once.state
    assert plan_unwrap(sample(name), client).text == sample(name)  # nothing to unwrap


@pytest.mark.parametrize("name", SAMPLE_CLIENTS)
def test_wrapped_stdio_servers_run_mcpeek_in_front_of_their_command(name: str) -> None:
    client = client_named(name)
    assert client is not None
    before = servers_of(sample(name), name)
    after = servers_of(plan_wrap(sample(name), client, python=PYTHON).text, name)
    assert after.keys() == before.keys()
    wrapped = 0
    for key, entry in before.items():
        if "command" not in entry:  # HTTP: left exactly as it was
            assert after[key] == entry
            continue
        wrapped += 1
        assert after[key]["command"] == PYTHON
        assert after[key]["args"] == [*LAUNCHER, entry["command"], *entry.get("args", [])]
        rest = {k: v for k, v in after[key].items() if k not in ("command", "args")}
        assert rest == {k: v for k, v in entry.items() if k not in ("command", "args")}
    assert wrapped >= 1


def test_the_rest_of_the_file_is_untouched_outside_the_changed_values() -> None:
    client = client_named("vscode")
    assert client is not None
    original = sample("vscode")
    wrapped = plan_wrap(original, client, python=PYTHON).text
    for kept in (
        "// VS Code workspace MCP servers",
        "/* the memory server, from npm */",
        "// trailing comment",
        '"inputs": [',
        '"envFile"',
        "},\n  },\n}\n",
    ):
        assert kept in wrapped
    # Only the lines holding a command or an args array differ.
    changed = [
        (a, b) for a, b in zip(original.splitlines(), wrapped.splitlines(), strict=True) if a != b
    ]
    assert changed and all('"command"' in a or '"args"' in a for a, _ in changed)


def test_an_entry_without_args_gets_them_after_its_command_and_loses_them_again() -> None:
    client = client_named("claude-desktop")
    assert client is not None
    text = '{"mcpServers": {\n  "a": {\n    "command": "srv",\n    "env": {}\n  }\n}}\n'
    wrapped = plan_wrap(text, client, python=PYTHON)
    assert wrapped.text == (
        '{"mcpServers": {\n  "a": {\n    "command": "/opt/py/bin/python3",\n'
        '    "args": ["-I", "-m", "mcpeek", "stdio", "--", "srv"],\n    "env": {}\n  }\n}}\n'
    )
    assert wrapped.state.args_added == [("mcpServers", "a")]
    back = plan_unwrap(wrapped.text, client, state=wrapped.state)
    assert back.text == text and not back.state
    # Without the state file (deleted, or a hand-made wrapper) the args stay, empty.
    assert plan_unwrap(wrapped.text, client).text == text.replace(
        '"srv",\n', '"srv",\n    "args": [],\n'
    )


def test_empty_args_after_the_command_as_claude_code_writes_them_come_back() -> None:
    client = client_named("claude-code-user")
    assert client is not None
    text = (
        '{\n  "mcpServers": {\n    "a": {\n      "type": "stdio",\n      "command": "srv",\n'
        '      "args": [],\n      "env": {}\n    }\n  }\n}'
    )
    wrapped = plan_wrap(text, client, python=PYTHON)
    assert not wrapped.state
    assert plan_unwrap(wrapped.text, client, state=wrapped.state).text == text


def test_the_original_command_is_kept_as_written_escapes_included() -> None:
    client = client_named("claude-desktop")
    assert client is not None
    text = '{"mcpServers": {"a": {"command": "C:\\\\srv\\u0020x.exe", "args": ["--v"]}}}'
    wrapped = plan_wrap(text, client, python=PYTHON).text
    assert '"--", "C:\\\\srv\\u0020x.exe", "--v"]' in wrapped
    assert json.loads(wrapped)["mcpServers"]["a"]["args"][-2:] == ["C:\\srv x.exe", "--v"]
    assert plan_unwrap(wrapped, client).text == text


def test_only_the_named_servers_are_wrapped_and_an_unknown_name_is_an_error() -> None:
    client = client_named("claude-desktop")
    assert client is not None
    plan = plan_wrap(sample("claude-desktop"), client, {"weather"}, python=PYTHON)
    assert plan.changes == ["wrapped weather (mcpServers)"]
    states = {s.name: s.state for s in survey(plan.text, client)}
    assert states["weather"] == "wrapped" and states["filesystem"] == "not wrapped"
    with pytest.raises(ConfigError, match="no server named nope"):
        plan_wrap(sample("claude-desktop"), client, {"weather", "nope"})
    unwrapped = plan_unwrap(plan.text, client, {"filesystem"})
    assert unwrapped.text == plan.text  # filesystem was not wrapped: nothing to undo


def test_http_servers_are_left_alone_with_their_url_reported() -> None:
    client = client_named("claude-code")
    assert client is not None
    plan = plan_wrap(sample("claude-code"), client, python=PYTHON)
    assert plan.http_left == [
        ("shared-server", "https://example.com/mcp", 6280),
        ("legacy-sse", "https://mcp.example.com/sse", 6281),
    ]
    assert any("shared-server" in note and "HTTP" in note for note in plan.notes)


def test_the_inspector_entry_and_a_table_made_for_it() -> None:
    client = client_named("vscode")
    assert client is not None
    text = '{\n  "inputs": []\n}\n'
    added = plan_wrap(text, client, add_inspector=True, python=PYTHON).text
    entry = json.loads(added)["servers"]["mcpeek"]
    assert entry == {"type": "stdio", "command": PYTHON, "args": [*MODULE_PREFIX, "mcp"]}
    assert [s.state for s in survey(added, client)] == ["mcpeek mcp (the inspector)"]
    assert plan_unwrap(added, client).text == text
    odd = '{"servers": null}'
    plan = plan_wrap(odd, client, add_inspector=True)
    assert plan.text == odd and plan.notes == ["not adding mcpeek: servers is not an object"]


def test_entries_mcpeek_does_not_understand_are_left_alone() -> None:
    client = client_named("claude-desktop")
    assert client is not None
    text = '{"mcpServers": {"a": {"command": "x", "args": "not a list"}, "b": 3, "c": {}}}'
    plan = plan_wrap(text, client, python=PYTHON)
    assert plan.text == text and len(plan.notes) == 3


def test_a_hand_written_mcpeek_wrapper_is_recognised() -> None:
    client = client_named("cursor")
    assert client is not None
    text = '{"mcpServers": {"a": {"command": "mcpeek", "args": ["stdio", "-q", "--", "srv", "1"]}}}'
    assert [s.state for s in survey(text, client)] == ["wrapped"]
    assert plan_wrap(text, client).text == text
    unwrapped = json.loads(plan_unwrap(text, client).text)
    assert unwrapped["mcpServers"]["a"] == {"command": "srv", "args": ["1"]}


def test_claude_code_user_config_wraps_user_and_local_scope_servers() -> None:
    client = client_named("claude-code-user")
    assert client is not None
    listed = survey(sample("claude-code-user"), client)
    assert [(s.table, s.name) for s in listed] == [
        ("mcpServers", "memory"),
        ("projects[/home/me/work/app]", "db"),
    ]
    plan = plan_wrap(sample("claude-code-user"), client, python=PYTHON)
    assert {s.state for s in survey(plan.text, client)} == {"wrapped"}


@pytest.mark.parametrize("client", CLIENTS, ids=lambda c: c.name)
def test_malformed_configs_are_refused_with_a_place(client: object) -> None:
    with pytest.raises(ConfigError, match=r"^3:1: "):
        plan_wrap('{"mcpServers": {\n  "a": {"command": "x"}\n', client)  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="not a JSON object"):
        plan_wrap("[]", client)  # type: ignore[arg-type]


def test_stdio_options_go_between_stdio_and_the_dashes_and_unwrap_all_the_same() -> None:
    client = client_named("claude-code")
    assert client is not None
    options = ("--home", "/var/caps")
    plan = plan_wrap(sample("claude-code"), client, python=PYTHON, stdio_options=options)
    args = json.loads(plan.text)["mcpServers"]["airtable"]["args"]
    assert args == [*MODULE_PREFIX, "stdio", *options, "--", "npx", "-y", "airtable-mcp-server"]
    assert plan_wrap(plan.text, client, python=PYTHON).text == plan.text
    assert plan_unwrap(plan.text, client).text == sample("claude-code")


def test_http_servers_pointed_at_local_proxies_and_back() -> None:
    client = client_named("cursor")
    assert client is not None
    original = sample("cursor")
    plan = plan_wrap(original, client, python=PYTHON, http_port=7000)
    assert servers_of(plan.text, "cursor")["mcpServers/remote"]["url"] == (
        "http://127.0.0.1:7000/v1/mcp"
    )
    [record] = plan.state.proxied
    assert (record.table, record.server, record.upstream) == (
        "mcpServers",
        "remote",
        "https://api.example.com/v1/mcp",
    )
    assert record.command() == (
        "mcpeek http --upstream https://api.example.com/v1/mcp --listen 127.0.0.1:7000"
    )
    assert '"url": "http://127.0.0.1:7000/v1/mcp",' in plan.text
    assert [s.state for s in survey(plan.text, client, plan.state)][1].startswith("wrapped")
    again = plan_wrap(plan.text, client, python=PYTHON, state=plan.state, http_port=7000)
    assert again.text == plan.text and again.state == plan.state
    back = plan_unwrap(plan.text, client, state=plan.state)
    assert back.text == original and not back.state
    # Without its record, a local URL is a URL like any other: unwrap leaves it.
    assert plan_unwrap(plan.text, client).text != original


def test_http_ports_skip_those_already_taken_and_urls_with_variables_are_left() -> None:
    client = client_named("vscode")
    assert client is not None
    text = (
        '{"servers": {"a": {"type": "http", "url": "https://a.example/mcp?k=1"},\n'
        '"b": {"type": "http", "url": "https://${input:host}/mcp"},\n'
        '"c": {"type": "sse", "url": "http://c.example:8080/sse"}}}'
    )
    first = plan_wrap(text, client, {"a"}, http_port=6280)
    assert '"url": "http://127.0.0.1:6280/mcp?k=1"' in first.text
    second = plan_wrap(first.text, client, state=first.state, http_port=6280)
    assert '"url": "http://127.0.0.1:6281/sse"' in second.text
    assert any("left b (servers) as it is: its url holds variables" in n for n in second.notes)
    assert [r.server for r in second.state.proxied] == ["a", "c"]
    back = plan_unwrap(second.text, client, {"c"}, state=second.state)
    assert back.text == first.text and back.state == first.state


def test_a_proxy_never_takes_a_port_another_entry_names() -> None:
    """l's own server listens on 6280: k's proxy must not be handed that port, whether
    wrap --http points k at it or only advises the command."""
    client = client_named("cursor")
    assert client is not None
    text = (
        '{"mcpServers": {"k": {"url": "http://user:pw@host.example/mcp?token=abc"}, '
        '"l": {"url": "http://127.0.0.1:6280/mcp"}, "m": {"url": "http://localhost:6281/"}}}'
    )
    plan = plan_wrap(text, client, {"k"}, http_port=6280)
    assert plan.changes == ["pointed k (mcpServers) at a local mcpeek http"]  # reads after
    # "would have" (--dry-run) as well as alone
    assert json.loads(plan.text)["mcpServers"]["k"]["url"] == "http://127.0.0.1:6282/mcp?token=abc"
    [record] = plan.state.proxied
    assert record.upstream == "http://user:pw@host.example/mcp?token=abc"  # kept whole
    advised = plan_wrap(text, client, {"k"})
    assert advised.http_left == [("k", "http://user:pw@host.example/mcp?token=abc", 6282)]


def test_printed_commands_hide_the_credentials_of_the_url() -> None:
    client = client_named("cursor")
    assert client is not None
    text = '{"mcpServers": {"k": {"url": "http://user:pw@host.example/mcp?token=abc&v=1"}}}'
    [record] = plan_wrap(text, client, http_port=7000).state.proxied
    line = record.command()
    assert "pw" not in line and "abc" not in line
    assert "'http://user:***@host.example/mcp?token=***&v=1' --listen 127.0.0.1:7000" in line


def test_home_asked_of_an_entry_already_wrapped_is_said_not_applied() -> None:
    client = client_named("cursor")
    assert client is not None
    text = '{"mcpServers": {"w": {"command": "npx", "args": ["-y", "weather"]}}}'
    wrapped = plan_wrap(text, client, python=PYTHON, stdio_options=("--home", "/a")).text
    again = plan_wrap(wrapped, client, python=PYTHON, stdio_options=("--home", "/b"))
    assert again.text == wrapped  # left as it is ...
    assert again.notes == [  # ... and said so
        "w (mcpServers) is already wrapped with --home /a: --home /b not applied "
        "(unwrap it first to change them)"
    ]
    same = plan_wrap(wrapped, client, python=PYTHON, stdio_options=("--home", "/a"))
    assert same.notes == ["w (mcpServers) is already wrapped"]


@pytest.mark.parametrize(
    ("args", "wrapped"),
    [
        ('["-y", "w"]', '["-I", "-m", "mcpeek", "stdio", "--", "npx", "-y", "w"]'),
        ('["-y","w"]', '["-I","-m","mcpeek","stdio","--","npx","-y","w"]'),
        ('["-y"]', '["-I", "-m", "mcpeek", "stdio", "--", "npx", "-y"]'),
        ("[]", '["-I", "-m", "mcpeek", "stdio", "--", "npx"]'),
        ('[\n  "-y"\n]', '["-I", "-m", "mcpeek", "stdio", "--", "npx",\n  "-y"\n]'),
    ],
)
def test_wrap_spaces_the_inserted_args_as_the_array_is_spaced(args: str, wrapped: str) -> None:
    client = client_named("cursor")
    assert client is not None
    text = '{"mcpServers": {"w": {"command": "npx", "args": ' + args + "}}}"
    plan = plan_wrap(text, client, python="py")
    assert plan.text == '{"mcpServers": {"w": {"command": "py", "args": ' + wrapped + "}}}"
    assert plan_unwrap(plan.text, client, state=plan.state).text == text


@pytest.mark.parametrize("http_port", [None, 6280])
def test_a_url_that_is_no_string_and_an_empty_command_are_left_with_a_note(
    http_port: int | None,
) -> None:
    client = client_named("cursor")
    assert client is not None
    text = '{"mcpServers": {"k": {"url": 7}, "e": {"command": " "}}}'
    plan = plan_wrap(text, client, python=PYTHON, http_port=http_port)
    assert plan.text == text and plan.http_left == [] and not plan.state.proxied
    assert plan.notes == [
        "left k (mcpServers) as it is: its url is not a string",
        "left e (mcpServers) as it is: its command is empty",
    ]
