"""One HTTP exchange as the ``http.*`` rules remember it, and the facts they share.

:class:`Exchange` is what the
:class:`~mcpeek.rules.families._http_tracker.ExchangeTracker` of the ``http.*`` rules
keeps of one exchange while it is open: its request, its response head once
it came, what its messages were, and the client messages that wait for that
head to be judged.
"""

from __future__ import annotations

from typing import TypeVar

from mcpeek.inspector.records import Http
from mcpeek.rules.base import LEGACY_SPEC, MODERN_SPEC
from mcpeek.rules.context import MessageContext
from mcpeek.rules.families._bounded import Lru

STREAMABLE = f"{MODERN_SPEC}/basic/transports/streamable-http"
LEGACY_TRANSPORTS = f"{LEGACY_SPEC}/basic/transports"
MCP = "io.modelcontextprotocol/"
JSON = "application/json"
SSE = "text/event-stream"
ORIGIN = "http:origin"
#: the request methods whose params member ``Mcp-Name`` mirrors
NAME_METHODS = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}
#: ``Rule.directions`` of a rule that judges only what the client sends
FROM_CLIENT = {kind: "c2s" for kind in ("request", "notification", "result", "error", "invalid")}

K = TypeVar("K")
V = TypeVar("V")


def refresh(memory: Lru[K, V], key: K, value: V) -> None:
    """``memory.put(key, value)``, skipped when that is already the newest entry."""
    if memory and next(reversed(memory)) == key and memory[key] == value:
        return
    memory.put(key, value)


def header_map(pairs: list[tuple[str, str]] | None) -> dict[str, str]:
    """Headers by lower-cased name; repeated fields joined with ``", "`` (RFC 9110)."""
    if not pairs:
        return {}
    # As recorded: lower-case names, none repeated (one C-speed test of all the names:
    # lower() has an ASCII fast path, islower() looks each character up).
    out = dict(pairs)
    if len(out) == len(pairs):
        names = "".join(out)
        if names.lower() == names:  # (then each name is its own lower case)
            return out
    out = {}
    for name, value in pairs or ():
        key = name if name.islower() else name.lower()  # recorded names are lower-case
        out[key] = f"{out[key]}, {value}" if key in out else value
    return out


def media_type(value: str) -> str:
    """``text/event-stream`` of ``Text/Event-Stream; charset=utf-8``."""
    if value in (JSON, SSE):  # (the usual value, already its own media type)
        return value
    return value.split(";", 1)[0].strip().lower()


class Exchange:
    """What the rules remember of one HTTP exchange while it is open."""

    __slots__ = (
        "c2s",
        "content_type",
        "conversation",
        "era",
        "has_request",
        "headers",
        "judged",
        "method",
        "path",
        "resp_headers",
        "resp_seq",
        "s2c",
        "seq",
        "status",
        "waiting",
        "with_body",
        "x",
    )

    def __init__(self, record: Http) -> None:
        self.x = record.x
        self.seq = record.seq
        self.method = (record.method or "").upper()
        self.path = record.path
        # The header maps, parsed at once: with every rule, each exchange's are read
        # (by _http_quiet's check of a POST, by the rules otherwise), and an attribute
        # read costs a fraction of a property's (Python 3.11 does not specialise those).
        #: the request headers by lower-cased name
        self.headers = header_map(record.headers)
        #: the response headers by lower-cased name (``{}`` before the response)
        self.resp_headers: dict[str, str] = {}
        #: the response's media type (``None`` before the response, or without one)
        self.content_type: str | None = None
        self.resp_seq: int | None = None
        self.status: int | None = None
        self.with_body = False  # a non-JSON-RPC body was recorded
        self.s2c = 0  # JSON-RPC messages the server sent on this exchange
        self.c2s: list[int] = []  # client notifications/responses (seq), for the status rule
        self.has_request = False
        self.conversation: str | None = None
        self.era: str | None = None
        self.judged: set[str] = set()  # the rules that judged its first client message
        #: the client's messages that came before the response head, to judge then
        self.waiting: list[MessageContext] = []

    def respond(self, record: Http) -> None:
        """The response's status and headers arrived."""
        self.resp_seq = record.seq
        self.status = record.status
        self.resp_headers = headers = header_map(record.headers)
        value = headers.get("content-type")
        self.content_type = media_type(value) if value is not None else None

    @property
    def session_key(self) -> str:
        """The conversation key the Analyzer gives this exchange."""
        session = self.headers.get("mcp-session-id") or self.resp_headers.get("mcp-session-id")
        return f"http:session:{session}" if session is not None else ORIGIN

    @property
    def success(self) -> bool:
        return self.status is not None and 200 <= self.status < 300
