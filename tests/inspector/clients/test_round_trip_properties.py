"""Wrap/unwrap on generated configs: in every layout ``json.dumps`` can write, and
as JSONC with comments, odd whitespace and trailing commas between any two tokens.

For any config: unwrap(wrap(text)) is the text, byte for byte; wrapping a
wrapped config changes nothing; and the wrapped entries mean what they
should (mcpeek's launcher, then the original command and args, the rest
of the entry as it was).
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from mcpeek.inspector.clients.entries import MODULE_PREFIX
from mcpeek.inspector.clients.jsonc import parse
from mcpeek.inspector.clients.known import client_named
from mcpeek.inspector.clients.plan import plan_unwrap, plan_wrap, survey
from tests.inspector.clients.values import plain

PYTHON = "/opt/py/bin/python3"
CLIENT = client_named("claude-desktop")
assert CLIENT is not None

words = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=12)
stdio_entries = st.fixed_dictionaries(
    {"command": words},
    optional={
        "args": st.lists(words, max_size=4),
        "env": st.dictionaries(words, words, max_size=2),
        "type": st.just("stdio"),
    },
)
http_entries = st.fixed_dictionaries({"url": st.just("https://example.com/mcp")})
configs = st.fixed_dictionaries(
    {"mcpServers": st.dictionaries(words, st.one_of(stdio_entries, http_entries), max_size=4)},
    optional={"globalShortcut": words, "other": st.lists(st.integers(), max_size=3)},
)
layouts = st.fixed_dictionaries(
    {
        "indent": st.sampled_from([None, 0, 1, 2, 4, "\t"]),
        "ensure_ascii": st.booleans(),
        "separators": st.sampled_from([None, (",", ":"), (", ", ": "), (" , ", " : ")]),
    }
)


@settings(max_examples=150, deadline=None)
@given(configs, layouts)
def test_round_trip_and_idempotence(config: dict[str, Any], layout: dict[str, Any]) -> None:
    assert CLIENT is not None
    text = json.dumps(config, **layout)
    wrapped = plan_wrap(text, CLIENT, python=PYTHON)
    again = plan_wrap(wrapped.text, CLIENT, python=PYTHON, state=wrapped.state)
    assert again.text == wrapped.text and again.state == wrapped.state
    assert plan_unwrap(wrapped.text, CLIENT, state=wrapped.state).text == text

    after = json.loads(wrapped.text)
    assert {k: v for k, v in after.items() if k != "mcpServers"} == {
        k: v for k, v in config.items() if k != "mcpServers"
    }
    for name, entry in config["mcpServers"].items():
        now = after["mcpServers"][name]
        if not entry.get("command", "").strip():  # no command, or an empty one: left
            assert now == entry
            continue
        launcher = [*MODULE_PREFIX, "stdio", "--", entry["command"]]
        assert now == {**entry, "command": PYTHON, "args": [*launcher, *entry.get("args", [])]}


GAPS = ["", " ", "\n    ", "\t", "/* c */", ' // a comment, with [ { : " in it\n', "/**/\n"]
VSCODE = client_named("vscode")
assert VSCODE is not None


def jsonc_dump(value: object, draw: Any) -> str:
    """``value`` as JSONC with a drawn gap (whitespace, comments) between any two
    tokens and, now and then, a trailing comma."""

    def gap() -> str:
        return str(draw(st.sampled_from(GAPS)))

    def trailing() -> str:
        return "," + gap() if draw(st.booleans()) else ""

    if isinstance(value, dict):
        members = [
            f"{gap()}{json.dumps(k)}{gap()}:{gap()}{jsonc_dump(v, draw)}{gap()}"
            for k, v in value.items()
        ]
        return "{" + ",".join(members) + (trailing() if members else gap()) + "}"
    if isinstance(value, list):
        items = [f"{gap()}{jsonc_dump(v, draw)}{gap()}" for v in value]
        return "[" + ",".join(items) + (trailing() if items else gap()) + "]"
    return json.dumps(value, ensure_ascii=bool(draw(st.booleans())))


@settings(max_examples=150, deadline=None)
@given(configs, st.data())
def test_jsonc_round_trip_with_comments_anywhere(config: dict[str, Any], data: Any) -> None:
    assert VSCODE is not None
    config = {
        "servers": config["mcpServers"],
        **{k: v for k, v in config.items() if k != "mcpServers"},
    }
    text = jsonc_dump(config, data.draw)
    wrapped = plan_wrap(text, VSCODE, python=PYTHON)
    again = plan_wrap(wrapped.text, VSCODE, python=PYTHON, state=wrapped.state)
    assert again.text == wrapped.text
    assert plan_unwrap(wrapped.text, VSCODE, state=wrapped.state).text == text
    after = plain(parse(wrapped.text, jsonc=True))
    assert isinstance(after, dict)
    for name, entry in config["servers"].items():
        if not entry.get("command", "").strip():  # no command, or an empty one: left
            assert after["servers"][name] == entry
            continue
        launcher = [*MODULE_PREFIX, "stdio", "--", entry["command"]]
        wanted = {**entry, "command": PYTHON, "args": [*launcher, *entry.get("args", [])]}
        assert after["servers"][name] == wanted
    empty = {name for name, entry in config["servers"].items() if "command" in entry} - {
        name for name, entry in config["servers"].items() if entry.get("command", "").strip()
    }
    stdio = [s for s in survey(wrapped.text, VSCODE) if s.kind == "stdio" and s.name not in empty]
    assert {s.state for s in stdio} <= {"wrapped"}
