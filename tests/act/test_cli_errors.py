"""Bad action options: exit 2 and one line on stderr, before anything starts."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.conftest import mcpeek_argv


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(mcpeek_argv(*args), capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize("mode", ["stdio", "http"])
@pytest.mark.parametrize(
    ("options", "says"),
    [
        (["--fault", "~zz => drop"], "bad filter: unknown operator ~zz"),
        (["--intercept", "~m ("], "--intercept '~m (': bad filter"),
        (["--fault", "~m ping => explode"], "unknown action 'explode'"),
        (["--fault", "~m ping => delay 5 p=7"], "p=7: expected a probability"),
        (["--faults", "missing.toml"], "missing.toml: No such file"),
        (["--faults", "bad.toml"], "not valid TOML"),
        (["-s", "broken.py"], "syntax error at line 1"),
        (["-s", "nothing.py"], "no such file"),
        (["--seed", "3"], "--seed does nothing without --fault"),
    ],
)
def test_bad_actions_exit_2_with_one_line(
    mode: str, options: list[str], says: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "bad.toml").write_text("[[fault]\n")
    (tmp_path / "broken.py").write_text("def on_message(msg, flow)\n")
    capture = str(tmp_path / "never.jsonl")
    if mode == "stdio":
        proc = run("stdio", "-w", capture, *options, "--", "true")
    else:
        proc = run("http", "--upstream", "http://127.0.0.1:9/mcp", "-w", capture, *options)
    assert proc.returncode == 2
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("mcpeek: ") and says in lines[0], proc.stderr
    assert not (tmp_path / "never.jsonl").exists()  # nothing started, nothing written
