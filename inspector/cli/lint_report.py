"""Lint results in the four output formats: text, JSON lines, SARIF 2.1.0, JUnit XML.

This lives in the CLI, the composition root, because it joins the core
(capture files) and the rules (their catalog and violations).
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TextIO
from xml.sax.saxutils import escape, quoteattr

from mcpeek.inspector import __version__
from mcpeek.inspector.views.findings import lint_json
from mcpeek.rules.base import SEVERITY_ORDER, Rule, listed_era
from mcpeek.rules.engine import Reported

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
SARIF_LEVEL = {"error": "error", "warning": "warning", "info": "note"}
#: What the JSON encoder escapes in ASCII text (control characters, quote, backslash);
#: one regex pass, where str.isprintable looked up every character's Unicode class.
_ESCAPED = re.compile(r'[\x00-\x1f"\\]')


@dataclass
class FileResult:
    path: str
    violations: list[Reported] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    error: str | None = None  # the file could not be read at all


def write_text(results: Sequence[FileResult], out: TextIO) -> None:
    for result in results:
        if result.error is not None:
            print(f"{result.path}: cannot lint: {result.error}", file=out)
            continue
        counts: dict[str, int] = defaultdict(int)
        for v in result.violations:
            counts[v.severity] += 1
        summary = ", ".join(
            f"{counts[s]} {s}{'s' if counts[s] != 1 else ''}"
            for s in ("error", "warning", "info")
            if counts[s]
        )
        print(f"{result.path}: {summary or 'no violations'}", file=out)
        by_rule: dict[str, list[Reported]] = defaultdict(list)
        for v in result.violations:
            by_rule[v.rule].append(v)
        order = sorted(by_rule, key=lambda r: (-SEVERITY_ORDER.get(by_rule[r][0].severity, 0), r))
        for rule in order:
            items = by_rule[rule]
            print(f"\n  {items[0].severity.upper():<8}{rule}  ({len(items)})", file=out)
            if items[0].spec:
                print(f"          {items[0].spec}", file=out)
            for v in items:
                where = f"seq {', '.join(map(str, v.msgs))}" if v.msgs else "capture"
                print(f"    - {where}: {v.message}", file=out)
                if v.excerpt:
                    print(f"        {v.excerpt}", file=out)
        for problem in result.problems:
            print(f"  note: {problem}", file=out)
        print(file=out)


def write_problems(results: Sequence[FileResult], err: TextIO) -> None:
    """The read problems (a truncated last line, a bad record) as ``mcpeek: note:`` lines.

    The machine formats have no place for them on stdout (JSON lines keep one
    shape), so without this a corrupt capture would pass CI without a trace.
    """
    for result in results:
        for problem in result.problems:
            print(f"mcpeek: note: {result.path}: {problem}", file=err)


class JsonLines:
    """``lint --format json``: one line per violation, written as the engine reports it
    (:meth:`add`), so that lint holds no more than :attr:`BATCH` characters of findings
    in memory, however many a capture makes. :meth:`flush` writes what is held (lint
    calls it after each capture). A failed write (``| head``, a full disk) is kept in
    :attr:`error` and ends the writing: the engine calls :meth:`add` inside its guard
    for the rule that reported, where an exception would count as the rule's crash."""

    #: Characters of lines held before they are written at once: one write per line
    #: was one system call per finding under ``PYTHONUNBUFFERED`` (as CI images often
    #: set it), a tenth of what lint spent on finding them.
    BATCH = 1 << 16

    def __init__(self, out: TextIO) -> None:
        self._out = out
        # One encoder for every line: json.dumps with any non-default option builds a
        # new JSONEncoder per call, which cost lint as much as encoding the line did.
        self._encode = json.JSONEncoder(ensure_ascii=False).encode
        self.error: OSError | None = None
        self.path = ""
        # (rule, severity, spec) → the line's text before its message and after its
        # msgs (None: a part the encoder must write); a capture's findings repeat them
        self._known: dict[tuple[str, str, str], tuple[str, str] | None] = {}
        self._head = ""
        self._held: list[str] = []
        self._held_chars = 0

    def start(self, path: str) -> None:
        """The lines that follow are about the capture ``path``."""
        self.flush()
        self.path = path
        self._known = {}
        self._head = '{"file": ' + self._encode(path) + ', "rule": '

    def add(self, v: Reported) -> None:
        if self.error is not None:
            return
        line = _json_line(v, self._head, self._known, self._encode)
        if line is None:
            line = self._encode(lint_json(self.path, v)) + "\n"
        self._held.append(line)
        self._held_chars += len(line)
        if self._held_chars >= self.BATCH:
            self.flush()

    def flush(self) -> None:
        """Write the lines held so far."""
        held = self._held
        if not held or self.error is not None:
            return
        self._held = []
        self._held_chars = 0
        try:
            self._out.write("".join(held))
        except OSError as exc:
            self.error = exc


def _json_line(
    v: Reported,
    head: str,
    known: dict[tuple[str, str, str], tuple[str, str] | None],
    encode: Callable[[object], str],
) -> str | None:
    """The line ``encode(lint_json(...)) + "\\n"`` writes, put together from its parts
    (encoding each string character by character cost lint more than finding most
    violations); ``None`` when the violation has an odd part, for the encoder to write
    it whole."""
    msgs = v.msgs
    if v.made is not None:
        return None
    for seq in msgs:  # (a loop, not any() of a generator: once per line)
        if type(seq) is not int:
            return None
    key = (v.rule, v.severity, v.spec)
    parts: tuple[str, str] | None = known.get(key, _UNKNOWN)
    if parts is _UNKNOWN:
        parts = known[key] = _line_parts(head, key, encode)
    message = v.message
    if parts is None or type(message) is not str:
        return None
    if message.isascii() and _ESCAPED.search(message) is None:
        shown_message = '"' + message + '"'  # what the encoder writes for such text
    else:
        shown_message = encode(message)
    shown_msgs = str(msgs[0]) if len(msgs) == 1 else ", ".join(map(str, msgs))
    opening, closing = parts
    return opening + shown_message + ', "msgs": [' + shown_msgs + closing


def _line_parts(
    head: str, texts: tuple[str, str, str], encode: Callable[[object], str]
) -> tuple[str, str] | None:
    """A line's text up to its message, and from its msgs' closing bracket on."""
    if any(type(text) is not str for text in texts):
        return None
    rule, severity, spec = map(encode, texts)
    return f'{head}{rule}, "severity": {severity}, "message": ', f'], "spec": {spec}}}\n'


_UNKNOWN: Any = object()


def write_sarif(results: Sequence[FileResult], rules: dict[str, type[Rule]], out: TextIO) -> None:
    # Every catalog rule is described (stable ruleIndex), plus internal findings.
    used = sorted(set(rules) | {v.rule for r in results for v in r.violations})
    driver_rules = []
    for rule_id in used:
        cls = rules.get(rule_id)
        entry: dict[str, object] = {"id": rule_id}
        if cls is not None:
            entry.update(
                {
                    "shortDescription": {"text": cls.summary},
                    "helpUri": cls.spec,
                    "defaultConfiguration": {"level": SARIF_LEVEL[cls.severity]},
                    "properties": {"era": listed_era(cls)},
                }
            )
        else:
            entry["shortDescription"] = {"text": "internal finding of mcpeek"}
        driver_rules.append(entry)
    index = {rule_id: i for i, rule_id in enumerate(used)}
    sarif_results = []
    for result in results:
        for v in result.violations:
            region = {"startLine": v.msgs[-1] + 1} if v.msgs else {"startLine": 1}
            sarif_results.append(
                {
                    "ruleId": v.rule,
                    "ruleIndex": index[v.rule],
                    "level": SARIF_LEVEL.get(v.severity, "warning"),
                    "message": {"text": v.message},
                    "locations": [
                        {
                            "physicalLocation": {
                                "artifactLocation": {"uri": result.path},
                                "region": region,
                            }
                        }
                    ],
                    "properties": {"msgs": v.msgs},
                }
            )
    doc = {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "mcpeek",
                        "version": __version__,
                        "rules": driver_rules,
                        "informationUri": "https://modelcontextprotocol.io/specification/2026-07-28",
                    }
                },
                "results": sarif_results,
                "invocations": [sarif_invocation(results)],
            }
        ],
    }
    json.dump(doc, out, indent=2, ensure_ascii=False)
    out.write("\n")


def sarif_invocation(results: Sequence[FileResult]) -> dict[str, object]:
    """The run's invocation: lint did run, and the read problems are its notifications."""
    notifications = [
        {
            "level": "note",
            "message": {"text": problem},
            "locations": [{"physicalLocation": {"artifactLocation": {"uri": result.path}}}],
        }
        for result in results
        for problem in result.problems
    ]
    invocation: dict[str, object] = {"executionSuccessful": True}
    if notifications:
        invocation["toolExecutionNotifications"] = notifications
    return invocation


def write_junit(results: Sequence[FileResult], rules: dict[str, type[Rule]], out: TextIO) -> None:
    """One test suite per file, one test case per catalog rule (failed if it fired)."""
    out.write('<?xml version="1.0" encoding="UTF-8"?>\n<testsuites name="mcpeek lint">\n')
    for result in results:
        by_rule: dict[str, list[Reported]] = defaultdict(list)
        for v in result.violations:
            by_rule[v.rule].append(v)
        # A file that could not be read checked no rule: its one test case is the read.
        names = sorted(set(rules) | set(by_rule)) if result.error is None else []
        failures = sum(1 for name in names if by_rule.get(name))
        errors = 1 if result.error is not None else 0
        out.write(
            f'  <testsuite name={quoteattr(result.path)} tests="{len(names) + errors}" '
            f'failures="{failures}" errors="{errors}">\n'
        )
        if result.error is not None:
            out.write(
                f'    <testcase name="read" classname="mcpeek.capture">'
                f"<error message={quoteattr(result.error)}/></testcase>\n"
            )
        for name in names:
            out.write(f'    <testcase name={quoteattr(name)} classname="mcpeek.rules"')
            fired = by_rule.get(name)
            if not fired:
                out.write("/>\n")
                continue
            text = "\n".join(f"[{v.severity}] seq {v.msgs}: {v.message}" for v in fired)
            out.write(
                f">\n      <failure message={quoteattr(fired[0].message)} "
                f"type={quoteattr(fired[0].severity)}>{escape(text)}</failure>\n"
                f"    </testcase>\n"
            )
        if result.problems:  # read problems: not a rule's failure, but never silent
            notes = "\n".join(f"note: {problem}" for problem in result.problems)
            out.write(f"    <system-err>{escape(notes)}</system-err>\n")
        out.write("  </testsuite>\n")
    out.write("</testsuites>\n")
