"""What the live-checks worker tells its proxy: one JSON line per message, typed.

The worker (:mod:`mcpeek.inspector.cli.live_worker`) encodes, the proxy
(:mod:`mcpeek.inspector.cli.live`) decodes with one decoder of the union
:data:`WorkerLine`; each message is tagged by its ``k`` field:

* ``{"k":"ready"}``: the worker runs (its first line);
* ``{"k":"flow","line":"…"}``: a flow line (``--flows``) for the proxy's stderr;
* ``{"k":"violation","violation":{…}}``: a finding, the engine's
  :class:`~mcpeek.rules.engine.Reported` as it is;
* ``{"k":"checked","records":N}``: the worker's last line, how many records it
  checked (the proxy's own ``violation`` records aside).

The other way, the proxy writes the bare commands ``done`` and ``stop`` on the
worker's stdin (:data:`mcpeek.inspector.cli.live.DONE`, ``STOP``). The proxy
imports this module (and so the rules) only once it starts a worker: a proxy
without live checks starts without them.
"""

from __future__ import annotations

import msgspec

from mcpeek.rules.engine import Reported


class Ready(msgspec.Struct, tag_field="k", tag="ready", frozen=True):
    pass


class FlowLine(msgspec.Struct, tag_field="k", tag="flow", frozen=True):
    line: str


class Found(msgspec.Struct, tag_field="k", tag="violation", frozen=True):
    violation: Reported


class Checked(msgspec.Struct, tag_field="k", tag="checked", frozen=True):
    records: int


WorkerLine = Ready | FlowLine | Found | Checked


def decoder() -> msgspec.json.Decoder[WorkerLine]:
    return msgspec.json.Decoder(WorkerLine)
