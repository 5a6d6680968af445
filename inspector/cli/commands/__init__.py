"""The subcommands; importing this package registers every one of them.

Each module here defines one :class:`~inspector.cli.base.Command` subclass;
they are imported by walking the package, so a new subcommand is a new file
and nothing else.
"""

import importlib
import pkgutil


def _import_all() -> None:
    for module in pkgutil.iter_modules(__path__):
        if not module.name.startswith("_"):
            importlib.import_module(f"{__name__}.{module.name}")


_import_all()
