"""Bad input to the commands: one line ``mcpeek: ...`` and exit 2, nothing lost,
never a traceback; and input that only looks odd (a byte order mark) is read."""

from __future__ import annotations

from pathlib import Path

import pytest

from mcpeek.inspector.cli.main import main

CAPTURES = Path(__file__).resolve().parents[3] / "captures"
CAPTURE = CAPTURES / "modern-stdio.jsonl"


def with_bom(tmp_path: Path) -> Path:
    """The example capture as an editor may save it: a UTF-8 byte order mark first."""
    path = tmp_path / "bom.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + CAPTURE.read_bytes())
    return path


@pytest.mark.parametrize(
    "words",
    [
        ["lint", "{bom}"],
        ["show", "--format", "json", "{bom}"],
        ["diff", "{bom}", str(CAPTURE)],
        ["export", "--format", "otlp-json", "{bom}"],
    ],
)
def test_a_capture_saved_with_a_byte_order_mark_is_read(
    words: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bom = str(with_bom(tmp_path))
    code = main([word.replace("{bom}", bom) for word in words])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "not an mcpeek capture" not in err
    assert out  # the capture was read: flows, findings or spans were written
