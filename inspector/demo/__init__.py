"""``mcpeek demo``: a small MCP server and a scripted client that talk through mcpeek.

* :mod:`mcpeek.inspector.demo.server`: a 2026-07-28 MCP server in raw JSON-RPC over
  stdio (no SDK), with tools, a resource, a subscription, progress, a multi
  round-trip elicitation, cancellation, and two deliberate spec violations.
  Runnable as ``python -m mcpeek.inspector.demo.server``; its parts are
  :mod:`~mcpeek.inspector.demo.catalog` (what it declares), :mod:`~mcpeek.inspector.demo.tools`
  (the tool handlers) and :mod:`~mcpeek.inspector.demo.dispatch` (the JSON-RPC server).
* :mod:`mcpeek.inspector.demo.client`: the scripted client; it starts the real stdio
  proxy (``python -m mcpeek stdio -w CAPTURE -- python -m mcpeek.inspector.demo.server``)
  and plays one paced conversation through it; :mod:`~mcpeek.inspector.demo.connection`
  holds the process plumbing.

Nothing here needs more than mcpeek's own runtime dependencies.
"""
