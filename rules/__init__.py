"""The spec checks: pure, synchronous rules over the record stream.

Three places: the machinery (``base``: what a rule is; ``context``,
``engine``, ``gate``, ``verify``: how rules run), the rule families
(``families/``: one module per family, its rules registered as it is
imported; modules whose name starts with ``_`` are helpers the families
share), and the typed schema models of each protocol version (``models/``).
Importing this package registers every rule of the catalog;
:class:`~mcpeek.rules.engine.RuleEngine` runs them over an
:class:`~mcpeek.inspector.analysis.Analyzer`'s events and
:func:`~mcpeek.rules.base.catalog` lists them. Nothing here does I/O or imports aiohttp or textual.
"""

import importlib
import pkgutil

from mcpeek.rules import families
from mcpeek.rules.base import Finding, Rule, catalog
from mcpeek.rules.engine import Reported, RuleEngine

# Every public module of families/ is a rule family: importing it registers its
# rules (Rule.__init_subclass__). A new family is a new file there, nothing more.
for _module in pkgutil.iter_modules(families.__path__):
    if not _module.name.startswith("_"):
        importlib.import_module(f"{families.__name__}.{_module.name}")

__all__ = ["Finding", "Reported", "Rule", "RuleEngine", "catalog"]
