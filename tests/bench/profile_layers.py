#!/usr/bin/env python3
"""Where an HTTP relay's CPU goes, by layer, from a cProfile dump.

    python tests/bench/profile_layers.py FILE.prof [REQUESTS]

Each function's own time goes to the layer its file belongs to (aiohttp's
client, aiohttp's server, mcpeek's upstream client, the recording, the event
loop, ...). A built-in (``socket.send``, ``isinstance``) has no file: its time
goes to its callers' layers, in proportion to what each caller spent in it,
so the layers add up to the whole. With REQUESTS, each layer's time is also
given per request. Used by ``http_relay.py --profile``; a plain script.
"""

from __future__ import annotations

import pstats
import sys
from collections import defaultdict

# (layer, what a file path contains), first match wins.
LAYERS = (
    ("start-up (imports, compile)", ("<frozen importlib", "importlib/", "sre_", "re/_")),
    ("aiohttp client", ("aiohttp/client", "aiohttp/connector", "aiohttp/tcp_helpers")),
    ("aiohttp server", ("aiohttp/web", "aiohttp/http_parser", "aiohttp/base_protocol")),
    ("aiohttp shared (writer, streams, helpers)", ("aiohttp/",)),
    ("multidict, yarl", ("multidict/", "yarl/")),
    ("mcpeek upstream client", ("proxy/upstream", "httptools/")),
    ("recording (capture, redact, records)", ("proxy/sse", "proxy/http_record", "proxy/decod")),
    ("mcpeek relay (proxy/)", ("inspector/proxy/",)),
    ("recording (capture, redact, records)", ("inspector/capture/", "inspector/redact")),
    ("recording (capture, redact, records)", ("inspector/records", "msgspec")),
    ("live checks hand-off", ("inspector/live", "inspector/cli/live")),
    ("event loop (asyncio)", ("asyncio/", "selectors.py", "ssl.py", "socket.py")),
)
OTHER = "other mcpeek / stdlib"


def layer_of(filename: str) -> str | None:
    """The layer of a file, ``None`` for a built-in (no file)."""
    if filename == "~":
        return None
    for layer, parts in LAYERS:
        if any(part in filename for part in parts):
            return layer
    return OTHER


def layers(path: str) -> tuple[dict[str, float], float, dict[str, float]]:
    """Own time per layer (built-ins charged to their callers), the total, and the
    own time per file of the files in no layer."""
    stats = pstats.Stats(path).stats  # type: ignore[attr-defined]
    spent: dict[str, float] = defaultdict(float)
    unplaced: dict[str, float] = defaultdict(float)
    for (filename, _, name), (_, _, tottime, _, callers) in stats.items():
        layer = layer_of(filename)
        if layer is not None:
            spent[layer] += tottime
            if layer == OTHER:
                unplaced[filename.rpartition("site-packages/")[2]] += tottime
            continue
        edges = {c: e[2] for c, e in callers.items()}
        total = sum(edges.values())
        if not edges or total <= 0:
            spent["start-up (imports, compile)" if name in ("compile",) else OTHER] += tottime
            continue
        for caller, share in edges.items():
            spent[layer_of(caller[0]) or OTHER] += tottime * share / total
    return dict(spent), sum(spent.values()), dict(unplaced)


def report(path: str, requests: int | None = None) -> list[str]:
    spent, total, unplaced = layers(path)
    lines = [f"CPU by layer (own time, built-ins charged to callers): {total:.3f} s in all"]
    for layer, seconds in sorted(spent.items(), key=lambda kv: -kv[1]):
        per = f"  {seconds / requests * 1e6:7.0f} us/req" if requests else ""
        lines.append(f"  {layer:<42} {seconds:7.3f} s {seconds / total:6.1%}{per}")
    top = sorted(unplaced.items(), key=lambda kv: -kv[1])[:6]
    lines.append("  of which " + OTHER + ": " + ", ".join(f"{f} {t:.3f} s" for f, t in top))
    return lines


if __name__ == "__main__":
    n = int(sys.argv[2]) if len(sys.argv) > 2 else None
    print("\n".join(report(sys.argv[1], n)))
