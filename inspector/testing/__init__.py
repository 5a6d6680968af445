"""Helpers for tests, shipped with the package (like mitmproxy's ``mitmproxy.test``).

- :mod:`mcpeek.inspector.testing.tee`: a byte-exact tee to put between two stdio
  peers, logging what each side wrote, so tests can compare a capture with
  the real wire.
- :mod:`mcpeek.inspector.testing.wire`: rebuild the byte streams a capture recorded.
"""
