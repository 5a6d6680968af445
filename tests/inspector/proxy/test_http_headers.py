"""Which headers the HTTP relay passes on (``end_to_end``)."""

from __future__ import annotations

from multidict import CIMultiDict, CIMultiDictProxy

from mcpeek.inspector.proxy.http_headers import end_to_end


def test_hop_by_hop_headers_and_those_connection_lists_are_dropped_in_any_case() -> None:
    given = CIMultiDict(
        [
            ("Accept", "a"),
            ("connection", "Keep-Alive, X-Hop ,close,"),
            ("KEEP-ALIVE", "timeout=5"),
            ("X-Hop", "1"),
            ("Transfer-Encoding", "chunked"),
            ("x-end", "1"),
            ("TE", "trailers"),
            ("X-End", "2"),
            ("x-hop", "2"),
            ("Upgrade", "h2c"),
            ("Proxy-Connection", "keep-alive"),
        ]
    )
    kept = [("Accept", "a"), ("x-end", "1"), ("X-End", "2")]
    assert list(end_to_end(given).items()) == kept
    assert list(end_to_end(CIMultiDictProxy(given)).items()) == kept
    assert list(end_to_end(list(given.items())).items()) == kept
    assert len(given) == 11  # the caller's headers are left as they are


def test_headers_with_nothing_to_drop_are_kept_in_order_with_their_duplicates() -> None:
    given = CIMultiDict([("B", "1"), ("a", "2"), ("b", "3"), ("Content-Length", "4")])
    assert list(end_to_end(given).items()) == list(given.items())
