"""Credentials out of what a capture says it recorded: the upstream URL, the server command.

A capture's header names its target: ``mcpeek http``'s upstream URL, which a
hosted server may want a key in (``/mcp?api_key=…``), or the command a stdio
server was started with (``--token=…``, ``API_KEY=… server``). These are
redacted by name only, as a target's parameters are: the header is written
as the run starts, before the secret detector is built (see ``Redactor``),
and a run waits for nothing it does not need.

A URL's password is never printed or recorded, even with redaction off: it
is replaced by ``<redacted>`` wherever mcpeek shows the URL.
"""

from __future__ import annotations

from mcpeek.inspector.capture.redact_rules import is_secret_header, is_secret_param, marker
from mcpeek.inspector.capture.redact_text import may_hold_url_params, redact_url_params

# A flag whose next argument is its value, when its name ends so (``--api-key
# KEY``, ``--token TOKEN``): a narrower rule than a ``name=value`` pair's, since a
# flag with no value of its own (``--no-auth``) may stand before any argument.
_VALUE_FLAG_ENDS = ("token", "apikey", "accesskey", "secretkey", "password", "passwd", "secret")


def without_password(url: str) -> str:
    """``url`` fit to print or record: the password of a ``user:password@`` replaced."""
    scheme, sep, rest = url.partition("://")
    end = min((i for i in map(rest.find, "/?#") if i >= 0), default=len(rest))
    userinfo, at, host = rest[:end].rpartition("@")
    if not sep or not at or ":" not in userinfo:
        return url
    user = userinfo.partition(":")[0]
    return f"{scheme}://{user}:<redacted>@{host}{rest[end:]}"


def redacted_url(url: str) -> str:
    """``url`` fit to print or record with redaction on: its password replaced, and
    the values of its query's and fragment's parameters named like credentials."""
    url = without_password(url)
    if may_hold_url_params(url):
        return redact_url_params(url) or url
    return url


def redact_command(argv: list[str]) -> list[str]:
    """A server's command line with the values its credential options give replaced:
    ``--token=T``, ``--api-key K``, ``API_KEY=K`` (as ``env`` takes it), a header
    ``Authorization: Bearer T``, a URL's password and secret parameters."""
    out: list[str] = []
    value_next = False
    for arg in argv:
        if value_next and arg and not arg.startswith("-"):
            out.append(marker(arg))
            value_next = False
            continue
        name = arg.lstrip("-")
        value_next = arg.startswith("-") and "=" not in arg and _names_value(name)
        out.append(_redact_argument(arg))
    return out


def _names_value(flag: str) -> bool:
    squashed = flag.lower().replace("-", "").replace("_", "")
    return squashed == "key" or squashed.endswith(_VALUE_FLAG_ENDS)


def _redact_argument(arg: str) -> str:
    if "://" in arg:
        return redacted_url(arg)
    name, sep, value = arg.partition("=")
    if sep and value and " " not in name and is_secret_param(name.lstrip("-")):
        return f"{name}={marker(value)}"
    header, colon, field = arg.partition(":")
    if colon and field.strip() and " " not in header and is_secret_header(header.lower()):
        return f"{header}: {marker(field.strip())}"
    return arg


def recorded_target(target: list[str] | str, *, redact: bool) -> list[str] | str:
    """What a capture's header records of ``target``: redacted (``redact``), or with
    a URL's password replaced only."""
    if isinstance(target, str):
        return redacted_url(target) if redact else without_password(target)
    return redact_command(target) if redact else target
