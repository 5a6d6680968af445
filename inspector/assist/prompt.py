"""The ``why_did_this_call_fail`` prompt: one flow, its violations and the spec they cite.

The spec is cited by each rule's link to its section and the catalog's
explanation (the product reads no spec files): the assistant can follow the
link, and the text says what the rule enforces.
"""

from __future__ import annotations

import json
from typing import Any

#: Characters of one message shown in the prompt; get_flow gives the rest.
PROMPT_BODY = 4000


def why_prompt(detail: dict[str, Any]) -> str:
    """The prompt's text, from ``get_flow``'s answer for the flow."""
    flow = detail["flow"]
    what = " ".join(str(part) for part in (flow["method"], flow["name"]) if part)
    lines = [
        f"Why did this MCP call fail? In the capture {detail['capture']}, flow {flow['flow']} "
        f"({what or 'no method'}) ended with status {flow['status']!r}"
        + (f" after {flow['latency_ms']} ms." if flow["latency_ms"] is not None else "."),
        "Explain what went wrong and which side (client or server) is at fault, citing the "
        "MCP specification sections below, and say how to fix it.",
        "",
        "## Messages (as recorded; redacted values stay redacted)",
    ]
    for message in detail["messages"]:
        arrow = "client → server" if message["dir"] == "c2s" else "server → client"
        raw = message["raw"]
        shown = raw[:PROMPT_BODY]
        cut = len(raw) > PROMPT_BODY or message["cut"]
        lines.append(f"- #{message['seq']} {message['time']} {arrow} ({message['bytes']} bytes):")
        lines.append(f"  {shown}" + (" …(cut)" if cut else ""))
        http = message.get("http")
        if http and http.get("status") is not None:
            lines.append(f"  HTTP {http.get('method')} {http.get('path')} → {http['status']}")
    lines.append("")
    if detail["violations"]:
        lines.append("## Spec violations mcpeek found in this flow")
        for v in detail["violations"]:
            lines.append(f"- [{v['severity']}] {v['rule']}: {v['message']} (messages {v['msgs']})")
            lines.append(f"  What the rule enforces: {v['explanation']}")
            if v["spec"]:
                lines.append(f"  Spec: {v['spec']}")
    else:
        lines.append("mcpeek found no spec violation in this flow; look at the answer itself.")
    lines.append("")
    lines.append("The flow, as `mcpeek show --format json` prints it:")
    lines.append(json.dumps(flow, ensure_ascii=False))
    return "\n".join(lines)
