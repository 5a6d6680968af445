"""JSON Schema machinery for tool schemas, which come from the server and are hostile.

The 2026-07-28 spec ("JSON Schema Usage") has clients validate tool
arguments and ``structuredContent`` against schemas a server provides, so
validating must neither fetch, nor hang, nor grow without bound:

- :mod:`.bounds`: what is refused before compiling or matching (depth, size,
  risky regexes, huge strings) and the step budget of one validation;
- :mod:`.validate`: :class:`SchemaChecker`, which compiles offline (every
  ``$ref`` URI is refused), checks the schema against its metaschema, caches
  validators and validates within the budget;
- :mod:`.report`: an :class:`Outcome` and its errors, located by JSON path;
- :mod:`.headers`: the ``x-mcp-header`` annotations of an ``inputSchema``.

This package holds no rule (the leading underscore keeps :mod:`rules` from
importing it as a family) and importing it does nothing but define: the
``jsonschema`` library is imported on first use.
"""

from mcpeek.rules.families._toolschema.bounds import (
    MAX_SCHEMA_DEPTH,
    risky_regex,
    schema_shape_problem,
)
from mcpeek.rules.families._toolschema.headers import HeaderAnnotation, header_annotations
from mcpeek.rules.families._toolschema.report import Outcome, describe, json_path
from mcpeek.rules.families._toolschema.validate import SchemaChecker

__all__ = [
    "MAX_SCHEMA_DEPTH",
    "HeaderAnnotation",
    "Outcome",
    "SchemaChecker",
    "describe",
    "header_annotations",
    "json_path",
    "risky_regex",
    "schema_shape_problem",
]
