"""The few rewrites that keep OAuth and the old HTTP+SSE transport working through the proxy.

A client that connected to the proxy checks that the protected-resource
metadata's ``resource`` is the URL it connected to (RFC 9728), and follows
``resource_metadata`` from a 401's ``WWW-Authenticate``; a legacy HTTP+SSE
client posts to the URL the ``endpoint`` event names. Each of those names
the upstream, so each is rewritten to name the proxy, and the capture notes
it (the upstream's original bytes are what is recorded).
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING

from aiohttp import web
from multidict import CIMultiDict

from mcpeek.inspector.records import Event, Http, text_fields

if TYPE_CHECKING:
    from mcpeek.inspector.proxy.http import HttpRelay
    from mcpeek.inspector.proxy.upstream import UpstreamResponse

PRM_PATH = "/.well-known/oauth-protected-resource"
# The "event: endpoint" line that opens a legacy HTTP+SSE endpoint event.
ENDPOINT_EVENT = re.compile(rb"(?:^|(?<=\n))event: ?endpoint\r?\n")


def _event_end(chunk: bytes, start: int) -> int:
    """Where the event whose lines begin at ``start`` ends (its blank line), or the chunk's end."""
    ends = [i for i in (chunk.find(b"\n\n", start), chunk.find(b"\n\r\n", start)) if i >= 0]
    return min(ends) + 1 if ends else len(chunk)


class Rewriter:
    def __init__(
        self, relay: HttpRelay, method: str, path: str, upstream: UpstreamResponse
    ) -> None:
        self.relay = relay
        self.method = method
        self.path = path  # decoded, as aiohttp's request.path
        self.upstream = upstream
        self._old = relay.origin
        self._new = relay.public_origin or relay.origin

    def headers(self, headers: CIMultiDict[str]) -> None:
        values = headers.getall("WWW-Authenticate", [])
        if values and self._old != self._new:
            del headers["WWW-Authenticate"]
            for value in values:
                headers.add("WWW-Authenticate", value.replace(self._old, self._new))

    def wants_body(self, content_type: str) -> bool:
        return (
            self.path.startswith(PRM_PATH)
            and self.upstream.status == 200
            and "json" in content_type
            and not self.upstream.headers.get("Content-Encoding")
        )

    def sse(self, chunk: bytes) -> bytes:
        """An ``endpoint`` event's absolute upstream URL, made to go through the proxy.

        Only the legacy HTTP+SSE stream (a GET) has such an event, and only its
        ``data`` lines are touched: any other stream, a tool result that merely
        mentions the upstream's URL among them, passes byte for byte.
        """
        if self._old == self._new or self.method != "GET" or b"endpoint" not in chunk:
            return chunk
        old, new = self._old.encode(), self._new.encode()
        out: list[bytes] = []
        done = 0
        for event in ENDPOINT_EVENT.finditer(chunk):
            start, end = event.end(), _event_end(chunk, event.end())
            lines = chunk[start:end].split(b"\n")
            lines = [ln.replace(old, new) if ln.startswith(b"data:") else ln for ln in lines]
            out += [chunk[done:start], b"\n".join(lines)]
            done = end
        out.append(chunk[done:])
        return b"".join(out)

    async def relay_metadata(self, x: str, headers: CIMultiDict[str]) -> web.StreamResponse:
        body = await self.upstream.read()
        new_body = body
        try:
            document = json.loads(body)
        except (ValueError, RecursionError):  # not JSON, or nested too deeply to read
            document = None
        resource = document.get("resource") if isinstance(document, dict) else None
        notes = []
        if isinstance(resource, str) and resource.startswith(self._old) and self._old != self._new:
            assert isinstance(document, dict)
            document["resource"] = self._new + resource[len(self._old) :]
            new_body = json.dumps(document).encode()
            notes.append(
                Event(
                    event="note", message=f"rewrote resource {resource} -> {document['resource']}"
                )
            )
        end = Http(x=x, phase="end", reason="complete")
        end.body, end.body_b64 = text_fields(body[:65536])
        self.relay.emit([*notes, end])
        headers.popall("Content-Length", None)
        response = web.Response(status=self.upstream.status, body=new_body, headers=headers)
        return response
