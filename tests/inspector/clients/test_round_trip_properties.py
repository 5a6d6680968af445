"""Wrap/unwrap on generated configs, in every layout ``json.dumps`` can write.

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
from mcpeek.inspector.clients.known import client_named
from mcpeek.inspector.clients.plan import plan_unwrap, plan_wrap

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
        if "command" not in entry:
            assert now == entry
            continue
        launcher = [*MODULE_PREFIX, "stdio", "--", entry["command"]]
        assert now == {**entry, "command": PYTHON, "args": [*launcher, *entry.get("args", [])]}
