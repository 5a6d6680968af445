"""What a test's ``mcp_record`` is set to do, and where its captures go.

The options come from the test's ``@pytest.mark.mcp_record(...)``, the ini
file (``mcpeek_record_mode``, ``mcpeek_fail_on``, ``mcpeek_capture_dir``) and
the command line (``--mcpeek-record``); a bad one is a :class:`PluginError`
that names it. A capture's path comes from the test's node id
(docs/pytest-plugin.md).
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mcpeek.inspector.pytest_plugin.checks import LEVELS, check_rule_ids
from mcpeek.inspector.pytest_plugin.runs import PluginError, Timing

if TYPE_CHECKING:
    import pytest

RECORD_MODES = ("once", "new", "none", "all")
MARKER_OPTIONS = ("fail_on", "capture_dir", "name", "mode", "ignore", "ignore_rules", "timing")
UNSAFE = re.compile(r"[^A-Za-z0-9_.\-\[\]=,+]+")
NAME_LIMIT = 150  # characters of a capture name (without .N, .failed and .jsonl)
HASH_LENGTH = 8  # hex digits of the hash that keeps changed names apart


def record_mode(config: pytest.Config) -> str:
    mode = config.getoption("mcpeek_record", None) or config.getini("mcpeek_record_mode")
    return str(mode or "once")


def test_name(item: pytest.Item) -> str:
    """``test_x[a-1]``, ``TestClass.test_y``: the node id after the file, made a file name.

    When that takes replacing characters (``test_x[Paris/1]`` → ``test_x[Paris_1]``) or
    cutting it to :data:`NAME_LIMIT`, a short hash of the node id after the file is
    appended (``test_x[Paris_1]-e4707314``), so two tests never share a capture
    (``test_x[Paris:1]`` is ``test_x[Paris_1]-79321b3e``)."""
    name = item.nodeid.split("::", 1)[1] if "::" in item.nodeid else item.name
    plain = name.replace("::", ".")
    safe = UNSAFE.sub("_", plain)
    if safe == plain and len(safe) <= NAME_LIMIT:
        return safe or "test"
    digest = hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:HASH_LENGTH]
    return f"{safe[: NAME_LIMIT - HASH_LENGTH - 1]}-{digest}"


def capture_base(item: pytest.Item, options: dict[str, Any]) -> Path:
    """The first capture's path without ``.jsonl``; see docs/pytest-plugin.md."""
    test_dir = item.path.parent
    configured = str(item.config.getini("mcpeek_capture_dir") or "")
    if options.get("capture_dir") is not None:
        directory = test_dir / Path(options["capture_dir"])
    elif configured:
        directory = item.config.rootpath / configured
    else:
        directory = test_dir / "captures"
    name = options.get("name")
    if name is not None:
        return directory / str(name).removesuffix(".jsonl")
    return directory / item.path.stem / test_name(item)


def numbered(base: Path, number: int, kind: str = "") -> Path:
    """``base.jsonl``, ``base.2.jsonl`` …; ``kind`` (``failed``, ``recording``) before
    the suffix."""
    parts = [base.name, *([str(number)] if number > 1 else []), *([kind] if kind else [])]
    return base.with_name(".".join(parts) + ".jsonl")


@dataclass(frozen=True)
class RecordOptions:
    """A test's ``mcp_record`` options, checked; ``base`` is its first capture's path
    without ``.jsonl``."""

    mode: str
    fail_on: str | None
    timing: Timing
    ignore: list[str]
    ignore_rules: list[str]
    base: Path


def read_options(item: pytest.Item) -> RecordOptions:
    """The options of ``item``'s ``mcp_record``: its marker's, else the ini's and the
    command line's; raises :class:`PluginError` for a bad one."""
    marker = item.get_closest_marker("mcp_record")
    options: dict[str, Any] = dict(marker.kwargs) if marker is not None else {}
    if marker is not None and marker.args:
        raise PluginError("@pytest.mark.mcp_record takes keyword arguments only")
    unknown = sorted(set(options) - set(MARKER_OPTIONS))
    if unknown:
        raise PluginError(
            f"@pytest.mark.mcp_record: unknown option {', '.join(unknown)} "
            f"(known: {', '.join(MARKER_OPTIONS)})"
        )
    mode = str(options.get("mode") or record_mode(item.config))
    if mode not in RECORD_MODES:
        raise PluginError(f"mcp_record mode {mode!r}: expected one of {RECORD_MODES}")
    default_fail_on = str(item.config.getini("mcpeek_fail_on") or "error")
    fail_on: str | None = options.get("fail_on", default_fail_on)
    if fail_on is not None and fail_on not in LEVELS:
        raise PluginError(f"fail_on={fail_on!r}: expected one of {LEVELS} or None")
    timing = options.get("timing", "fast")
    if timing not in ("fast", "recorded"):
        raise PluginError(f"timing={timing!r}: expected 'fast' or 'recorded'")
    ignore = _strings(options.get("ignore", ()))
    try:
        ignore_rules = check_rule_ids(_strings(options.get("ignore_rules", ())))
    except ValueError as exc:
        raise PluginError(f"ignore_rules: {exc}") from None
    return RecordOptions(mode, fail_on, timing, ignore, ignore_rules, capture_base(item, options))


def _strings(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    if not isinstance(value, (list, tuple, set, frozenset)):
        raise PluginError(f"expected a list of strings, not {value!r}")
    return [str(v) for v in value]
