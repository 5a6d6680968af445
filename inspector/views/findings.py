"""One violation as ``mcpeek lint --format json`` prints it, for every front end.

``{"file","rule","severity","message","msgs":[seq...],"spec"}`` (plus ``"made"`` on a
finding about a message mcpeek itself made or acted on): the CLI's
``lint`` and the MCP server (``mcpeek mcp``) both build it here, so that an
assistant reading the server's answer sees exactly what a script reading
``lint --format json`` sees. It takes anything with a violation's fields: a
capture's ``violation`` record or the rule engine's report.
"""

from __future__ import annotations

from typing import Any, Protocol


class FindingFields(Protocol):
    """What a violation holds, whichever object carries it."""

    @property
    def rule(self) -> str: ...
    @property
    def severity(self) -> str: ...
    @property
    def message(self) -> str: ...
    @property
    def msgs(self) -> list[int]: ...
    @property
    def spec(self) -> str: ...
    @property
    def made(self) -> str | None: ...


def lint_json(file: str, finding: FindingFields) -> dict[str, Any]:
    """The ``lint --format json`` object of ``finding``, found in capture ``file``."""
    line = {
        "file": file,
        "rule": finding.rule,
        "severity": finding.severity,
        "message": finding.message,
        "msgs": finding.msgs,
        "spec": finding.spec,
    }
    if finding.made is not None:  # mcpeek's doing (--fault, -s, --intercept), not a peer's
        line["made"] = finding.made
    return line
