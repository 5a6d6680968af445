"""``mcpeek demo``: a small MCP server and a scripted client that talk through mcpeek.

* :mod:`inspector.demo.server`: a 2026-07-28 MCP server in raw JSON-RPC over
  stdio (no SDK), with tools, a resource, a subscription, progress, a multi
  round-trip elicitation, cancellation, and two deliberate spec violations.
  Runnable as ``python -m inspector.demo.server``; its parts are
  :mod:`~inspector.demo.catalog` (what it declares), :mod:`~inspector.demo.tools`
  (the tool handlers) and :mod:`~inspector.demo.dispatch` (the JSON-RPC server).
* :mod:`inspector.demo.client`: the scripted client; it starts the real stdio
  proxy (``python -m inspector stdio -w CAPTURE -- python -m inspector.demo.server``)
  and plays one paced conversation through it; :mod:`~inspector.demo.connection`
  holds the process plumbing.

Nothing here needs more than mcpeek's own runtime dependencies.
"""
