"""Run by an interpreter that has mitmproxy: read a HAR file with mitmproxy's own
reader and print what it made of each entry, as one JSON line.

    python tests/e2e/mitm_read_har.py FILE.har

mitmproxy cannot share mcpeek's environment (its pins conflict with the dev
extra: cryptography, h11), so test_export_har.py runs this in a venv of its own.
"""

from __future__ import annotations

import json
import sys

from mitmproxy.io import FlowReader


def main(path: str) -> int:
    with open(path, "rb") as file:
        flows = list(FlowReader(file).stream())
    print(
        json.dumps(
            [
                {
                    "method": flow.request.method,
                    "url": flow.request.url,
                    "request_body": flow.request.get_text(strict=False),
                    "status": flow.response.status_code if flow.response else None,
                    "response_body": flow.response.get_text(strict=False)
                    if flow.response
                    else None,
                    "authorization": flow.request.headers.get("authorization"),
                }
                for flow in flows
            ]
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
