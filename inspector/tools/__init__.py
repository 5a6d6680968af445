"""Maintenance scripts run from a clone of the repository (``python -m inspector.tools.NAME``).

Not part of the ``mcpeek`` command line: ``record_examples`` regenerates the
example captures in ``captures/`` from the real-SDK peers in ``tests/peers/``.
"""
