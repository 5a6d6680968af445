"""Parsing fault rules: every action, times= and p=, TOML files, and the one-line errors."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from mcpeek.inspector.act.faults import FaultError, load_faults, parse_fault


def test_each_action_parses() -> None:
    assert parse_fault("~m ping => delay 500ms").action.seconds == 0.5
    assert parse_fault("~m ping => delay 2s").action.seconds == 2.0
    assert parse_fault("~m ping => delay 1.5").action.seconds == 1.5
    error = parse_fault('~m tools/call => error -32603 "it broke" times=2 p=0.5')
    assert (error.action.code, error.action.message) == (-32603, "it broke")
    assert (error.times, error.probability) == (2, 0.5)
    for name in ("drop", "disconnect", "corrupt"):
        assert parse_fault(f"~a => {name}").action.name == name


def test_reply_reads_the_file_relative_to_the_base(tmp_path: Path) -> None:
    (tmp_path / "answer.json").write_text('{"result": {"content": []}, "id": 99}')
    rule = parse_fault("~m tools/call => reply @answer.json", tmp_path)
    assert rule.action.body == {"result": {"content": []}}  # the id is the request's


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("~m ping drop", "expected 'FILTER => ACTION'"),
        ("~x => drop", "bad filter: unknown operator ~x"),
        ("~m ping => explode", "unknown action 'explode'"),
        ("~m ping => delay soon", "delay wants one duration"),
        ("~m ping => error boom", "error code 'boom' is not an integer"),
        ("~m ping => drop now", "drop takes no argument"),
        ("~m ping => drop times=0", "times=0: expected a whole number"),
        ("~m ping => drop p=2", "p=2: expected a probability"),
        ("~m ping => reply answer.json", "reply wants @FILE.json"),
        ("~m ping => reply @missing.json", "missing.json: No such file"),
        ("~m ping => reply-recorded missing.jsonl", "missing.jsonl"),
        ("~m ping =>", "no action after =>"),
    ],
)
def test_bad_rules_say_why_in_one_line(text: str, says: str, tmp_path: Path) -> None:
    with pytest.raises(FaultError) as caught:
        parse_fault(text, tmp_path)
    message = str(caught.value)
    assert says in message and "\n" not in message


def test_toml_file(tmp_path: Path) -> None:
    path = tmp_path / "faults.toml"
    path.write_text(
        '[[fault]]\nmatch = "~m tools/call"\naction = \'error -32603 "x"\'\ntimes = 1\n'
        '[[fault]]\nmatch = "~m ping"\naction = "delay 10ms"\np = 0.25\n'
    )
    first, second = load_faults(path)
    assert (first.action.name, first.times) == ("error", 1)
    assert (second.action.seconds, second.probability) == (0.01, 0.25)


@pytest.mark.parametrize(
    ("content", "says"),
    [
        ("[[fault]\n", "not valid TOML"),
        ('[[fault]]\nmatch = "~a"\n', "fault 1: wants match and action"),
        ('[[fault]]\nmatch = "~a"\naction = "drop"\nwhen = 1\n', "unknown: when"),
        ('[[fault]]\nmatch = "~a"\naction = "nope"\n', "fault 1: --fault"),
        ("[other]\nx = 1\n", "expected only [[fault]] tables"),
    ],
)
def test_bad_toml_says_why(content: str, says: str, tmp_path: Path) -> None:
    path = tmp_path / "faults.toml"
    path.write_text(content)
    with pytest.raises(FaultError, match=None) as caught:
        load_faults(path)
    assert says in str(caught.value)


def test_a_faults_file_that_is_not_text_says_so(tmp_path: Path) -> None:
    """Binary garbage: tomllib's UnicodeDecodeError was a traceback."""
    path = tmp_path / "faults.toml"
    path.write_bytes(b'[[fault]]\nmatch = "~a \xa7"\n')
    with pytest.raises(FaultError) as caught:
        load_faults(path)
    assert str(caught.value) == f"--faults {path}: not UTF-8 text (byte 22)"


@pytest.mark.parametrize(
    ("make", "says"),
    [
        (os.mkfifo, "is a FIFO (named pipe), not a file"),  # (was: hangs)
        (lambda path: path.write_text("[" * 100_000), "not valid JSON"),  # (was: RecursionError)
        (lambda path: path.write_bytes(b'{"result": "\xa7"}'), "not valid JSON"),
    ],
)
def test_a_reply_file_that_cannot_be_an_answer_says_why(
    make: Callable[[Path], object], says: str, tmp_path: Path
) -> None:
    make(tmp_path / "answer.json")
    with pytest.raises(FaultError) as caught:
        parse_fault("~m tools/call => reply @answer.json", tmp_path)
    assert says in str(caught.value)
