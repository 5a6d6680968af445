"""What counts as a credential by its name, and the marker that replaces one.

Names are the rules the secret detector (:mod:`mcpeek.inspector.capture.redact_detect`)
has no notion of: a header, a query parameter, a form field or a JSON member
*named* like a credential holds one, whatever its value looks like.
"""

from __future__ import annotations

import hashlib
import re

from mcpeek.inspector.records import str_bytes

MARKER_PREFIX = "<redacted sha256:"

# The headers mcpeek always redacted, whatever the name pattern says.
DEFAULT_SECRET_HEADERS = frozenset(
    {"authorization", "proxy-authorization", "cookie", "set-cookie", "x-api-key"}
)
# Named like credentials but needed in clear: Mcp-Session-Id is routing state
# (replay maps each recorded session to the live one by it, and the rules
# group exchanges by it); WWW-Authenticate is a challenge that points to the
# protected-resource metadata, not a credential.
NOT_SECRET_HEADERS = frozenset({"mcp-session-id", "www-authenticate"})

# Lower-cased, with "-" and "_" removed: "X-Goog-Api-Key" -> "xgoogapikey".
_SECRET_NAME = re.compile(r"auth|token|secret|key|passw|pwd|cookie|credential|signature")
# JSON members: narrower, since "key" alone or "auth" are common, harmless
# argument names in tool calls ("key": "user.name", "auth": "oauth2").
_SECRET_FIELD = re.compile(
    r"passw|pwd|secret|token|apikey|accesskey|privatekey|secretkey|credential"
    r"|authorization|cookie|sessionkey|signature"
)
# Named like credentials, but descriptions of them: OAuth metadata
# ("token_endpoint", "token_endpoint_auth_methods_supported"), a token's type
# or lifetime.
_NOT_SECRET_FIELD = re.compile(r"(endpoint|supported|uri|url|type|types|expiresin|expiry)$")
# OAuth 2.1 token-endpoint parameters (RFC 6749 4.1.3, RFC 7636 4.5): the
# authorization code and the PKCE verifier are as good as the token they buy.
OAUTH_PARAMS = frozenset(
    {
        "code",
        "code_verifier",
        "client_secret",
        "access_token",
        "refresh_token",
        "id_token",
        "client_assertion",
        "assertion",
        "password",
    }
)
# Query parameters that carry credentials though no pattern catches their name.
SECRET_PARAMS = OAUTH_PARAMS | {"key", "sig", "auth", "pass", "pw"}
# Named like credentials, but what a token is, not the token: an implicit grant's
# "#access_token=…&token_type=Bearer" (RFC 6749 4.2.2), a revocation's
# "token_type_hint" (RFC 7009 2.1), a token exchange's "subject_token_type" (RFC
# 8693 2.1), a "refresh_token_expires_in". Only after "token": a "secret_type" or
# an "api_key_type" stays hidden, whatever it holds.
_NOT_SECRET_PARAM = re.compile(r"token(type|typehint|expiresin)$")

# Members of a JSON-RPC message that correlation and replay depend on; never
# rewritten, whatever their name or value (an MRTR ``requestState`` may well
# be a signed token, and chains are followed by it).
STRUCTURAL_FIELDS = frozenset(
    {
        "jsonrpc",
        "id",
        "method",
        "progressToken",
        "requestId",
        "requestState",
        "cursor",
        "nextCursor",
    }
)


def marker(value: str | bytes) -> str:
    """``<redacted sha256:XXXXXXXX>``: the first 8 hex digits of the SHA-256 of the
    value's bytes, so that a reader sees whether two secrets were the same. A
    ``str`` may hold non-UTF-8 bytes as ``surrogateescape`` surrogates."""
    data = value if isinstance(value, bytes) else str_bytes(value)
    return f"{MARKER_PREFIX}{hashlib.sha256(data).hexdigest()[:8]}>"


def _squashed(name: str) -> str:
    return name.lower().replace("-", "").replace("_", "")


def is_secret_header(name: str, extra: frozenset[str] = frozenset()) -> bool:
    """Whether a header (lower-cased ``name``) carries a credential."""
    if name in DEFAULT_SECRET_HEADERS or name in extra:
        return True
    return name not in NOT_SECRET_HEADERS and bool(_SECRET_NAME.search(_squashed(name)))


def is_secret_param(name: str) -> bool:
    """Whether a query or form parameter carries a credential."""
    lname = name.lower()
    if lname in SECRET_PARAMS:
        return True
    squashed = _squashed(lname)
    return bool(_SECRET_NAME.search(squashed)) and not _NOT_SECRET_PARAM.search(squashed)


def is_secret_field(name: str) -> bool:
    """Whether a JSON member of a message holds a credential by its name."""
    if name in STRUCTURAL_FIELDS:
        return False
    squashed = _squashed(name)
    return bool(_SECRET_FIELD.search(squashed)) and not _NOT_SECRET_FIELD.search(squashed)
