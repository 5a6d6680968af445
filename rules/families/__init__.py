"""The rule families: one module per family of the catalog (``docs/rules.md``).

Each public module here defines :class:`~mcpeek.rules.base.Rule` subclasses,
registered by their catalog ID when :mod:`mcpeek.rules` imports the module;
the ``_``-prefixed modules are helpers several families share.
"""
