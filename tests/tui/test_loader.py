"""The viewer's loader and recheck: both read through run_capture, in the viewer's process."""

from __future__ import annotations

import json
import subprocess
import threading
from pathlib import Path

import pytest

from mcpeek.inspector.capture import CaptureWriter
from mcpeek.inspector.records import Event, Header, Msg
from mcpeek.inspector.views.session import SessionModel
from mcpeek.tui import loader, recheck
from tests.conftest import mcpeek_argv
from tests.tui.conftest import busy_capture

CAPTURES = Path("captures")
PING = '{"jsonrpc":"2.0","id":1,"method":"ping"}'


def load(
    path: Path, *, follow: bool = False, cancelled: object = None
) -> tuple[SessionModel, loader.Progress, list[int], str | None]:
    model = SessionModel(path)
    progress = loader.Progress(path.stat().st_size)
    updates: list[int] = []

    def notify() -> None:
        updates.append(model.records)

    error = loader.load_into(
        model,
        progress,
        notify,
        follow=follow,
        cancelled=cancelled if callable(cancelled) else (lambda: False),
    )
    return model, progress, updates, error


def test_a_capture_is_loaded_header_first_in_batches_then_finished(tmp_path: Path) -> None:
    path = busy_capture(tmp_path / "c.jsonl", calls=600)
    model, progress, updates, error = load(path)
    assert error is None
    assert isinstance(model.header, Header) and model.loaded
    assert model.records == len(path.read_bytes().splitlines())  # the header counts
    assert updates[-1] == model.records  # the last update says the loading is over
    assert progress.fraction == 1.0


def test_following_stops_at_the_exit_event(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    writer = CaptureWriter(path, transport="stdio", target=["srv"])
    writer.write(Msg(dir="c2s", ch="stdio", raw=PING))

    def later() -> None:
        writer.write(Event(event="exit", code=0))
        writer.close()

    threading.Timer(0.2, later).start()
    model, _, updates, error = load(path, follow=True)
    assert error is None and model.ended and model.loaded
    assert model.records == 3 and updates


def test_a_cancelled_load_stops_unfinished(tmp_path: Path) -> None:
    path = busy_capture(tmp_path / "c.jsonl", calls=600)
    asked = [0]

    def cancelled() -> bool:
        asked[0] += 1
        return asked[0] > 300

    model, _, _, error = load(path, cancelled=cancelled)
    assert error is None and not model.loaded
    assert model.records < 300


def test_a_capture_that_is_not_one_is_an_error_not_a_traceback(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    path.write_text("hello\n")
    _, _, _, error = load(path)
    assert error is not None and "not an mcpeek capture" in error


@pytest.mark.parametrize("name", ["violations.jsonl", "modern-http-sse.jsonl", "busy"])
def test_the_recheck_finds_what_lint_prints(name: str, tmp_path: Path) -> None:
    path = busy_capture(tmp_path / "c.jsonl") if name == "busy" else CAPTURES / name
    printed = subprocess.run(
        mcpeek_argv("lint", "--format", "json", str(path)),
        capture_output=True,
        text=True,
        timeout=120,
    ).stdout
    linted = sorted(
        (v["rule"], v["msgs"], v["message"], v["spec"])
        for v in map(json.loads, printed.splitlines())
    )
    found = recheck.recheck(path)
    assert found is not None
    assert sorted((v.rule, v.msgs, v.message, v.spec) for v in found) == linted
    assert bool(linted) == (name != "modern-http-sse.jsonl")  # a clean one, for contrast


def test_the_recheck_runs_in_the_viewers_process(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_child(*args: object, **kwargs: object) -> None:
        raise AssertionError("the recheck started a process")

    monkeypatch.setattr(subprocess, "Popen", no_child)
    found = recheck.recheck(CAPTURES / "violations.jsonl")
    assert found is not None and found


def test_a_cancelled_recheck_stops_before_the_next_record(tmp_path: Path) -> None:
    path = busy_capture(tmp_path / "c.jsonl", calls=600)
    asked = [0]

    def cancelled() -> bool:
        asked[0] += 1
        return asked[0] > 10

    assert recheck.recheck(path, cancelled) is None
    assert asked[0] == 11  # asked once per record, and not again once it said so


def test_a_recheck_of_a_file_that_is_not_a_capture_is_none(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    path.write_text("hello\n")
    assert recheck.recheck(path) is None
