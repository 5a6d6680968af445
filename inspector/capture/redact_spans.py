"""Where a plugin's match puts the secret, and the secrets' spans merged.

A plugin's pattern matches more than the secret: delimiters it needs around it,
a keyword before it, or only part of a token (a JWT's pattern stops before the
signature). The marker replaces the whole token.
"""

from __future__ import annotations

import re

TOKEN_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_+/=.-")


def secret_span(text: str, match: re.Match[str]) -> tuple[int, int]:
    """The secret in a plugin's match: its one capturing group when that is the
    secret (a URL's password), else the whole match without the delimiters the
    pattern needed around it; widened to the whole token it sits in (a JWT's
    pattern stops before the signature)."""
    if match.re.groups == 1 and len(match.group(1) or "") >= 6:
        start, end = match.span(1)
    else:
        start, end = match.span()
        while start < end and text[start] not in TOKEN_CHARS:
            start += 1
        while end > start and text[end - 1] not in TOKEN_CHARS:
            end -= 1
    while start > 0 and text[start - 1] in TOKEN_CHARS:
        start -= 1
    while end < len(text) and text[end] in TOKEN_CHARS:
        end += 1
    return start, end


def merged(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """``spans`` sorted, the empty ones dropped, those that overlap or touch joined."""
    out: list[tuple[int, int]] = []
    for start, end in sorted(s for s in spans if s[0] < s[1]):
        if out and start <= out[-1][1]:
            out[-1] = (out[-1][0], max(end, out[-1][1]))
        else:
            out.append((start, end))
    return out
