"""The spec checks: pure, synchronous rules over the record stream.

Importing this package registers every rule of the catalog (one family per
module). :class:`~mcpeek.rules.engine.RuleEngine` runs them over an
:class:`~mcpeek.inspector.analysis.Analyzer`'s events; :func:`~mcpeek.rules.base.catalog`
lists them. Nothing here does I/O or imports aiohttp or textual.
"""

import importlib
import pkgutil

from mcpeek.rules.base import Finding, Rule, catalog
from mcpeek.rules.engine import Reported, RuleEngine

# Every module of this package but the machinery is a rule family: importing
# it registers its rules (Rule.__init_subclass__). Nothing to keep in step.
_MACHINERY = {"base", "context", "engine", "testing"}
for _module in pkgutil.iter_modules(__path__):
    if _module.name not in _MACHINERY and not _module.name.startswith("_"):
        importlib.import_module(f"{__name__}.{_module.name}")

__all__ = ["Finding", "Reported", "Rule", "RuleEngine", "catalog"]
