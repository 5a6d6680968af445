"""Credentials out of what a capture says it recorded: the upstream URL, the server command.

A capture's header names its target: ``mcpeek http``'s upstream URL, which a
hosted server may want a key in (``/mcp?api_key=…``), or the command a stdio
server was started with (``--token=…``, ``API_KEY=… server``). These are
redacted by name only, as a target's parameters are: the header is written
as the run starts, before the secret detector is built (see ``Redactor``),
and a run waits for nothing it does not need. A recognisable secret in no
named place (a bare argument, a URL's path) is recorded as given.

A URL's password is never printed or recorded, even with redaction off: it
is replaced by ``<redacted>`` wherever mcpeek shows the URL.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable

import msgspec

from mcpeek.inspector.capture.redact_rules import (
    MARKER_PREFIX,
    is_secret_field,
    is_secret_header,
    is_secret_param,
    marker,
)
from mcpeek.inspector.capture.redact_text import redact_pairs

PASSWORD = "<redacted>"
# Named like a credential but naming something else (``--key-file PATH``,
# ``--auth-type oauth``), or saying there is none (``--no-auth``).
_NOT_A_VALUE = re.compile(r"^no[-_]|(file|path|dir|type|name|id|url|uri|endpoint|keyword)$")
# An option's or an environment variable's name, before its "=" (not a URL's).
_OPTION = re.compile(r"-{0,2}[A-Za-z0-9_.]+(?:-[A-Za-z0-9_.]+)*")
# A header given as an argument (``-H "Authorization: Bearer …"``): a field name,
# a colon and a space; "image:tag" and "host:port" have no space.
_HEADER_ARGUMENT = re.compile(r"([!#$%&'*+.^_`|~0-9A-Za-z-]+): ")


def redacted_url(url: str, *, redact: bool = True, hide: Callable[[str], str] = marker) -> str:
    """``url`` fit to print or record: its password replaced (always), and with
    ``redact`` each value ``hide`` hides: a user name given with no password (a
    token, as some hosts take one), and the parameters named like credentials
    in its path (``;``), query and fragment."""
    scheme, sep, rest = url.partition("://")
    if not sep:
        scheme, rest = "", url
    end = min((i for i in map(rest.find, "/?#") if i >= 0), default=len(rest))
    userinfo, at, host = rest[:end].rpartition("@")
    if at:
        user, colon, password = userinfo.partition(":")
        if password:
            userinfo = f"{user}:{PASSWORD if hide is marker else hide(password)}"
        elif redact and user and not user.startswith(MARKER_PREFIX):
            userinfo = hide(user) + colon
    head = f"{scheme}{sep}{userinfo}{at}{host}"
    if not redact:
        return head + rest[end:]
    before, hash_sign, fragment = rest[end:].partition("#")
    path, question, query = before.partition("?")
    path, semicolon, params = path.partition(";")
    parts = [
        path,
        semicolon,
        _pairs(params, hide),
        question,
        _pairs(query, hide),
        hash_sign,
        _pairs(fragment, hide),
    ]
    return head + "".join(parts)


def _pairs(text: str, hide: Callable[[str], str]) -> str:
    if "=" not in text:
        return text
    return redact_pairs(text, semicolons=True, hide=hide) or text


def redact_command(argv: list[str]) -> list[str]:
    """A server's command line with the values its credential options give replaced:
    ``--token=T``, ``--api-key K``, ``API_KEY=K`` (as ``env`` takes it), a header
    ``Authorization: Bearer T``, a URL's password and secret parameters, a JSON
    config's members named like credentials (``--config '{"apiKey": …}'``), the
    same inside one argument a shell runs (``sh -c "server --token T"``)."""
    out: list[str] = []
    value_next = False
    for arg in argv:
        # A value may begin with "-" (``--token -x1``), not with "--" (the next option).
        if value_next and arg and not arg.startswith(("--", MARKER_PREFIX)):
            out.append(marker(arg))
            value_next = False
            continue
        name = arg.lstrip("-")
        value_next = arg.startswith("-") and "=" not in arg and _names_a_secret(name)
        out.append(_redact_argument(arg))
    return out


def _names_a_secret(name: str) -> bool:
    lowered = name.lower()
    return bool(name) and is_secret_param(lowered) and not _NOT_A_VALUE.search(lowered)


def _redact_argument(arg: str) -> str:
    if MARKER_PREFIX in arg or PASSWORD in arg:
        return arg  # recorded before (a capture written again)
    if arg[:1] in ("{", "["):  # a JSON config (``--config '{"apiKey": "…"}'``)
        return _redact_json(arg) or arg
    name, sep, value = arg.partition("=")
    if sep and value and _OPTION.fullmatch(name):  # --name=value, NAME=value
        if _names_a_secret(name.lstrip("-")):
            return f"{name}={marker(value)}"  # the whole value, spaces and all
        config = _redact_json(value) if value[:1] in ("{", "[") else None  # --config={…}
        if config is not None:
            return f"{name}={config}"
    if " " in arg:  # a command line in one argument (sh -c), or a header
        header = _HEADER_ARGUMENT.match(arg)
        if header is not None:
            field = arg[header.end() :].strip()
            if field and is_secret_header(header[1].lower()):
                return f"{header[1]}: {marker(field)}"
            return arg
        try:
            words = shlex.split(arg)
        except ValueError:
            return arg
        redacted = redact_command(words)
        return " ".join(redacted) if redacted != words else arg
    if "://" in arg:
        return redacted_url(arg)
    return arg


def _redact_json(text: str) -> str | None:
    """``text``, a JSON document, with the string values of its members named like
    credentials replaced, at any depth (written again compactly); None when it is
    not JSON or holds none."""
    try:
        document = msgspec.json.decode(text)
        found: list[bool] = []
        redacted = _hidden_members(document, found)
    except (msgspec.DecodeError, RecursionError):
        return None
    return msgspec.json.encode(redacted).decode() if found else None


def _hidden_members(node: object, found: list[bool]) -> object:
    if isinstance(node, list):
        return [_hidden_members(item, found) for item in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, object] = {}
    for name, value in node.items():
        if isinstance(value, str) and value and is_secret_field(name):
            found.append(True)
            out[name] = marker(value)
        else:
            out[name] = _hidden_members(value, found)
    return out


def recorded_target(target: list[str] | str, *, redact: bool) -> list[str] | str:
    """What a capture's header records of ``target``: redacted (``redact``), or with
    a URL's password replaced only."""
    if isinstance(target, str):
        return redacted_url(target, redact=redact)
    return redact_command(target) if redact else target
