"""Which capability each method needs: one table for the rules and the surface model.

A request or notification belongs to a feature that one side declares in its
capabilities: a client's ``tools/call`` needs the server's ``tools``, a
server's ``sampling/createMessage`` the client's ``sampling``. The
``capability.not-declared`` rule judges traffic by these tables; the surface
model (``inspector/surface``) uses them to say what was used without being
declared and what was declared and never used.
"""

from __future__ import annotations

#: Client requests and notifications → the server capability they need.
SERVER_CAPABILITY: dict[str, str] = {
    "tools/list": "tools",
    "tools/call": "tools",
    "prompts/list": "prompts",
    "prompts/get": "prompts",
    "resources/list": "resources",
    "resources/read": "resources",
    "resources/templates/list": "resources",
    "resources/subscribe": "resources",
    "resources/unsubscribe": "resources",
    "completion/complete": "completions",
    "logging/setLevel": "logging",
}

#: Server notifications → the server capability that announces them.
SERVER_NOTIFICATION_CAPABILITY: dict[str, str] = {
    "notifications/message": "logging",
    "notifications/tools/list_changed": "tools",
    "notifications/prompts/list_changed": "prompts",
    "notifications/resources/list_changed": "resources",
    "notifications/resources/updated": "resources",
}

#: Server requests (legacy) and client notifications → the client capability.
CLIENT_CAPABILITY: dict[str, str] = {
    "sampling/createMessage": "sampling",
    "elicitation/create": "elicitation",
    "roots/list": "roots",
    "notifications/roots/list_changed": "roots",
}

#: Methods that need a capability's flag too (``tools`` with ``listChanged: true``).
CAPABILITY_FLAG: dict[str, str] = {
    "notifications/tools/list_changed": "tools.listChanged",
    "notifications/prompts/list_changed": "prompts.listChanged",
    "notifications/resources/list_changed": "resources.listChanged",
    "notifications/resources/updated": "resources.subscribe",
    "resources/subscribe": "resources.subscribe",
    "resources/unsubscribe": "resources.subscribe",
    "notifications/roots/list_changed": "roots.listChanged",
}
