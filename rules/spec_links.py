"""The spec link a violation carries: the page of the conversation's own version.

A rule links to the section it enforces in one revision (``Rule.spec``). A rule
of both eras mostly links to 2026-07-28, but a 2025-11-25 conversation is bound by
the 2025-11-25 text, whose pages are arranged differently (``basic/patterns/…``
was ``basic/utilities/…``; one ``basic/transports`` page held stdio and Streamable
HTTP). This table maps a 2026-07-28 section to the same requirement's section in
2025-11-25, only where that page and anchor exist there
(``tests/rules/test_spec_links.py`` checks each against the official pages); other
links stay as the rule gives them.
"""

from __future__ import annotations

from mcpeek.rules.base import LEGACY_SPEC, MODERN_SPEC

LEGACY_VERSION = "2025-11-25"
_TRANSPORTS_SEND = "basic/transports#sending-messages-to-the-server"

#: 2026-07-28 ``page#anchor`` → 2025-11-25 ``page#anchor``
LEGACY_SECTIONS: dict[str, str] = {
    "basic/index#error-responses": "basic/index#error-responses",
    "basic/index#messages": "basic/index#messages",
    "basic/index#notifications": "basic/index#notifications",
    "basic/index#requests": "basic/index#requests",
    "basic/index#responses": "basic/index#responses",
    "basic/index#result-responses": "basic/index#result-responses",
    "basic/patterns/cancellation#behavior-requirements": (
        "basic/utilities/cancellation#behavior-requirements"
    ),
    "basic/patterns/cancellation#timeouts": "basic/lifecycle#timeouts",
    "basic/patterns/progress#behavior-requirements": (
        "basic/utilities/progress#behavior-requirements"
    ),
    "basic/patterns/progress#implementation-notes": "basic/utilities/progress#implementation-notes",
    "basic/patterns/progress#progress-flow": "basic/utilities/progress#progress-flow",
    "basic/transports/streamable-http#protocol-version-header": (
        "basic/transports#protocol-version-header"
    ),
    "basic/transports/streamable-http#sending-messages": _TRANSPORTS_SEND,
    "server/resources#error-handling": "server/resources#error-handling",
    "server/tools#output-schema": "server/tools#output-schema",
    "server/tools#tool": "server/tools#tool",
    "server/tools#tool-names": "server/tools#tool-names",
}


def spec_for(url: str, version: str | None) -> str:
    """``url`` (a rule's link), or the same section in the conversation's version."""
    if version != LEGACY_VERSION or not url.startswith(MODERN_SPEC):
        return url
    section = LEGACY_SECTIONS.get(url[len(MODERN_SPEC) + 1 :])
    return f"{LEGACY_SPEC}/{section}" if section is not None else url


class SpecLinks:
    """:func:`spec_for`, remembered by (url, version): an engine's findings repeat both."""

    KEPT = 1024  # links remembered (a version string is whatever the peer sent)

    def __init__(self) -> None:
        self._links: dict[tuple[str, str | None], str] = {}

    def __call__(self, url: str, version: str | None) -> str:
        key = (url, version)
        link = self._links.get(key)
        if link is None:
            if len(self._links) >= self.KEPT:
                self._links.clear()  # ever new version strings: start over
            link = self._links[key] = spec_for(url, version)
        return link
