"""Maintenance scripts run from a clone (``python -m mcpeek.inspector.tools.NAME``).

Not part of the ``mcpeek`` command line: ``record_examples`` regenerates the
example captures in ``captures/`` from the real-SDK peers in ``tests/peers/``;
``rules_doc`` regenerates the rule catalog's page, ``docs/rules.md``, and
``module_map`` the module map, ``docs/modules.md`` (``generated_page`` is their
shared command line).
"""
