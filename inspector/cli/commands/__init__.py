"""The subcommands; importing a module here registers its command.

Each module defines one :class:`~mcpeek.inspector.cli.base.Command` subclass, named
like the module (``view.py`` → ``mcpeek view``; a ``_cmd`` suffix avoids a
clash with a top-level package, as in ``rules_cmd.py``). A new subcommand is
a new file and nothing else. :func:`load` imports only the module of the
command being run when it can tell which that is — ``mcpeek stdio`` need not
pay for importing aiohttp — and every module otherwise (``--help``).
"""

import importlib
import pkgutil


def _modules() -> list[str]:
    return [m.name for m in pkgutil.iter_modules(__path__) if not m.name.startswith("_")]


def load(command: str | None = None) -> None:
    """Import ``command``'s module, or every command module when unknown/None."""
    modules = _modules()
    if command is not None:
        for name in (command, f"{command}_cmd"):
            if name in modules:
                importlib.import_module(f"{__name__}.{name}")
                return
    for name in modules:
        importlib.import_module(f"{__name__}.{name}")
