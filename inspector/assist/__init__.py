"""``mcpeek mcp``: an MCP server over the captures, for assistants (issue #19).

A front end like the CLI and the viewer: it reads captures through the one
loop, numbers flows as ``show`` does, filters them with the viewer's
language and checks them with ``lint``'s rules, and answers in the JSON
shapes of ``show --format json`` and ``lint --format json``.

Modules: :mod:`~mcpeek.inspector.assist.shelf` (which captures, and what a name
means), :mod:`~mcpeek.inspector.assist.study` (one capture read),
:mod:`~mcpeek.inspector.assist.shapes` and :mod:`~mcpeek.inspector.assist.schemas`
(the answers and their schemas), :mod:`~mcpeek.inspector.assist.desk` (the
tools, without the SDK), :mod:`~mcpeek.inspector.assist.rerun` (the guarded
``replay_flow``), :mod:`~mcpeek.inspector.assist.prompt` and
:mod:`~mcpeek.inspector.assist.server` (the SDK's server), and
:mod:`~mcpeek.inspector.assist.serve` (stdio or Streamable HTTP).
"""
