"""The output schemas of the MCP server's tools, as TypedDicts the SDK publishes.

A tool's return annotation is its ``outputSchema``: a client (and a model)
knows the shape of every answer before calling. The shapes of flows and
violations are those of ``mcpeek show --format json`` and ``mcpeek lint
--format json`` (docs/assistants.md).
"""

from typing import TYPE_CHECKING, Any, cast

import msgspec
from pydantic import ConfigDict, with_config

# typing_extensions (a dependency of the SDK): pydantic needs its TypedDict below 3.12.
from typing_extensions import TypedDict

from mcpeek.inspector.views.flowline import FlowJson

#: The SDK validates each answer against its schema and drops what the schema does not
#: name: a field that show, lint or diff print tomorrow must reach the client as well.
OPEN = with_config(ConfigDict(extra="allow"))


@OPEN
class Severities(TypedDict):
    error: int
    warning: int
    info: int


@OPEN
class CaptureSummary(TypedDict, total=False):
    name: str
    path: str
    target: Any
    transport: str | None
    era: str | None
    created: str | None
    start: str | None
    duration_s: float | None
    messages: int
    flows: int
    violations: Severities
    live: bool
    problems: list[str]
    error: str  # only when the capture cannot be read


@OPEN
class CaptureList(TypedDict):
    captures: list[CaptureSummary]


def _flow_row() -> Any:
    """``FlowRow``: the fields of ``show --format json``'s line
    (:class:`~mcpeek.inspector.views.flowline.FlowJson`, the one declaration of
    them), then the row's own, so a field added to that line is in the schema too."""
    fields = {field.name: field.type for field in msgspec.structs.fields(FlowJson)}
    # The functional form: the fields are known at run time only.
    row = cast(Any, TypedDict)("FlowRow", {**fields, "violations": int, "worst": str | None})
    row.__doc__ = "A line of ``show --format json``, plus ``violations`` (a count) and ``worst``."
    row.__module__ = __name__
    return OPEN(row)


if TYPE_CHECKING:  # a row as the type checker sees it: built from FlowJson below
    FlowRow = dict[str, Any]
else:
    FlowRow = _flow_row()


@OPEN
class FlowPage(TypedDict):
    capture: str
    filter: str
    total: int
    matched: int
    offset: int
    flows: list[FlowRow]
    more: bool


@OPEN
class LintViolation(TypedDict):
    """A line of ``lint --format json``."""

    file: str
    rule: str
    severity: str
    message: str
    msgs: list[int]
    spec: str


@OPEN
class ExplainedViolation(LintViolation):
    explanation: str


@OPEN
class MessageDetail(TypedDict, total=False):
    seq: int
    dir: str
    t: float
    time: str | None
    kind: str
    method: str | None
    id: Any
    bytes: int
    raw: str
    cut: bool
    note: str
    http: dict[str, Any]


@OPEN
class FlowDetail(TypedDict):
    capture: str
    flow: FlowRow
    messages: list[MessageDetail]
    violations: list[ExplainedViolation]


@OPEN
class LintResult(TypedDict):
    capture: str
    violations: list[LintViolation]
    problems: list[str]


@OPEN
class RuleExplanation(TypedDict, total=False):
    id: str
    known: bool
    severity: str
    era: str
    summary: str
    explanation: str
    spec: str


@OPEN
class ReplayOutcome(TypedDict):
    """The server replayed to, and ``mcpeek replay --format json``'s line for the flow."""

    capture: str
    server: Any
    transport: str
    report: dict[str, Any]
    notes: list[str]


@OPEN
class DiffResult(TypedDict):
    """``mcpeek diff A B --format json``'s object (docs/diff.md)."""

    a: str
    b: str
    same: bool
    surface: list[dict[str, Any]]
    traffic: dict[str, Any]
    drift_a: list[dict[str, Any]]
    drift_b: list[dict[str, Any]]
