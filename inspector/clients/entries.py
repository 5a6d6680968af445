"""One server entry: what it is, and the text edits that wrap or unwrap it.

A wrapped stdio entry runs mcpeek in front of the original command::

    "command": "node", "args": ["server.js"]
    "command": "/usr/bin/python3",
    "args": ["-I", "-m", "mcpeek", "stdio", "--", "node","server.js"]

The command is the interpreter mcpeek runs on, by absolute path, in isolated
mode (``inspector.children.mcpeek_argv``): a desktop client starts servers
with a short ``PATH`` where a bare ``mcpeek`` is often not found, and a
virtual environment's interpreter finds its mcpeek without activation.
(An entry whose command is an ``mcpeek`` executable, with args
``["stdio", ..., "--", ...]``, is recognised as wrapped too, and so is one that
runs ``python -m mcpeek stdio ... -- ...`` with other interpreter options than
``-I``, or none. One that runs ``mcpeek stdio`` without ``--`` is not wrapped
again, nor unwrapped: where its server's command begins is for stdio's options
to say.)

Wrapping edits only two spans: the command's value, and the start of the
args array, where the launcher and the original command (its exact source
text) are inserted; the original items and their layout stay as they were.
An entry without args gets an ``"args"`` member right after its command
(noted in the state file: ``"args": []`` after a command looks the same).
Unwrapping removes exactly those insertions, so a round trip gives back the
original bytes.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import PurePath

from mcpeek.inspector.children import mcpeek_argv
from mcpeek.inspector.clients.jsonc import Array, Member, Node, Object, string_value

#: The launcher's args before the server's: ``python -I -m mcpeek``.
MODULE_PREFIX = ["-I", "-m", "mcpeek"]
HTTP_TYPES = frozenset({"http", "sse", "streamable-http", "streamableHttp"})


@dataclass(frozen=True)
class Edit:
    """Replace ``text[start:end]`` with ``new``."""

    start: int
    end: int
    new: str


def apply(text: str, edits: list[Edit]) -> str:
    """``text`` with every edit made (they must not overlap)."""
    out: list[str] = []
    pos = 0
    for edit in sorted(edits, key=lambda e: (e.start, e.end)):
        if edit.start < pos:
            raise ValueError(f"overlapping edits at offset {edit.start}")
        out.append(text[pos : edit.start])
        out.append(edit.new)
        pos = edit.end
    out.append(text[pos:])
    return "".join(out)


def quoted(value: str) -> str:
    return json.dumps(value, ensure_ascii=False)


def stdio_launcher(*args: str, python: str | None = None) -> list[str]:
    """The command line a wrapped entry runs: ``python -I -m mcpeek ARGS``."""
    return mcpeek_argv(*args, python=python)


def strings(node: Node | None) -> list[str] | None:
    """The items of an array of strings, else None."""
    if not isinstance(node, Array):
        return None
    values = [string_value(item) for item in node.items]
    return None if any(v is None for v in values) else [v for v in values if v is not None]


def kind_of(entry: Node) -> str:
    """``stdio``, ``http`` (a URL entry, SSE included) or ``other``."""
    if not isinstance(entry, Object):
        return "other"
    declared = entry.get("type")
    if entry.get("url") is not None or string_value(declared.value if declared else None) in (
        HTTP_TYPES
    ):
        return "http"
    command = entry.get("command")
    return "stdio" if command and string_value(command.value) is not None else "other"


def mcpeek_args_start(entry: Object) -> int | None:
    """Where mcpeek's own arguments begin in ``args`` when the entry runs mcpeek."""
    command = entry.get("command")
    args_member = entry.get("args")
    name = string_value(command.value) if command else None
    args = strings(args_member.value) if args_member else None
    if name is None or args is None:
        return None
    module = _after_module(args)
    if module is not None:
        return module
    if PurePath(name.replace("\\", "/")).stem.lower() == "mcpeek":
        return 0
    return None


def _after_module(args: list[str]) -> int | None:
    """Where the args after ``-m mcpeek`` begin in ``python [OPTIONS] -m mcpeek ...``
    (wrap writes MODULE_PREFIX: OPTIONS ``-I``; a hand may write others, or none)."""
    for i, arg in enumerate(args):
        if arg == "-mmcpeek":
            return i + 1
        if arg == "-m" or not arg.startswith("-"):
            return i + 2 if args[i : i + 2] == ["-m", "mcpeek"] else None
    return None


def runs_mcpeek(entry: Object, subcommand: str) -> bool:
    """Whether the entry runs ``mcpeek SUBCOMMAND``, as wrap writes it or otherwise."""
    start = mcpeek_args_start(entry)
    args_member = entry.get("args")
    args = strings(args_member.value) if args_member else None
    return start is not None and args is not None and args[start : start + 1] == [subcommand]


def wrapped_command_index(entry: Object) -> int | None:
    """The index in ``args`` of the original command when the entry is wrapped."""
    start = mcpeek_args_start(entry)
    args_member = entry.get("args")
    args = strings(args_member.value) if args_member else None
    if start is None or args is None or args[start : start + 1] != ["stdio"]:
        return None
    try:
        dashes = args.index("--", start + 1)
    except ValueError:
        return None
    return dashes + 1 if dashes + 1 < len(args) else None


def wrapped_options(entry: Object) -> list[str]:
    """The ``mcpeek stdio`` options of a wrapped entry (those before ``--``)."""
    index = wrapped_command_index(entry)
    start = mcpeek_args_start(entry)
    args_member = entry.get("args")
    args = strings(args_member.value) if args_member else None
    if index is None or start is None or args is None:
        return []
    return args[start + 1 : index - 1]


def is_inspector(entry: Node) -> bool:
    """An entry that runs ``mcpeek mcp`` (what ``--add-inspector`` adds)."""
    return isinstance(entry, Object) and runs_mcpeek(entry, "mcp")


def lead_of(text: str, member: Member) -> str:
    """The whitespace before a member's key: its line break and indentation (without
    a comment that sits there), or a space when the key follows on the same line."""
    lead = text[member.lead : member.key_start]
    if lead.strip() == "":
        return lead or " "
    indentation = lead[lead.rfind("\n") + 1 :]
    return "\n" + indentation if "\n" in lead and indentation.strip() == "" else " "


def wrap_edits(text: str, entry: Object, launcher: list[str]) -> list[Edit]:
    """The edits that put ``launcher`` (``[python, ..., "--"]``) in front of a stdio
    entry's command; the entry must be stdio and not wrapped yet."""
    command = entry.get("command")
    assert command is not None
    args = entry.get("args")
    original = text[command.value.start : command.value.end]
    array = args.value if args is not None and isinstance(args.value, Array) else None
    separator = _separator(text, array)
    inserted = separator.join([*map(quoted, launcher[1:]), original])
    edits = [Edit(command.value.start, command.value.end, quoted(launcher[0]))]
    if args is None:
        at = command.value.end
        edits.append(Edit(at, at, f',{lead_of(text, command)}"args": [{inserted}]'))
    elif array is not None:
        at = array.start + 1
        if not array.items:
            edits.append(Edit(at, at, inserted))
        elif "\n" in text[at : array.items[0].start]:
            # A bare comma: a space would end the line in an array written one item a line.
            edits.append(Edit(at, at, inserted + ","))
        else:  # one line: in front of the first item, spaced as the items are
            at = array.items[0].start
            edits.append(Edit(at, at, inserted + separator))
    return edits


def _separator(text: str, array: Array | None) -> str:
    """The comma and spacing between the items of a one-line array as it is written
    (``", "`` unless its first comma says otherwise): inserted items match it."""
    if array is None or not array.commas or len(array.items) < 2:
        return ", "
    after = text[array.commas[0] + 1 : array.items[1].start]
    return "," + after if "\n" not in after and not after.strip() else ", "


def unwrap_edits(text: str, entry: Object, *, args_added: bool = False) -> list[Edit]:
    """The edits that undo :func:`wrap_edits` on a wrapped entry; ``args_added``: wrap
    gave the entry its ``args`` member, which goes too (if it is still as wrap wrote it)."""
    index = wrapped_command_index(entry)
    command, args = entry.get("command"), entry.get("args")
    assert index is not None and command is not None and args is not None
    array = args.value
    assert isinstance(array, Array)
    original = array.items[index]
    edits = [Edit(command.value.start, command.value.end, text[original.start : original.end])]
    if index + 1 < len(array.items):  # the server's own args follow: cut up to them
        spacing = text[array.commas[index] + 1 : array.items[index + 1].start]
        if "\n" in spacing:  # wrap put the launcher on the line of the "[" (see wrap_edits)
            edits.append(Edit(array.start + 1, array.commas[index] + 1, ""))
        else:  # one line: wrap put it in front of the first item, with the spacing
            edits.append(Edit(array.items[0].start, array.items[index + 1].start, ""))
        return edits
    members = entry.members
    at = members.index(command)
    follows = args_added and at + 1 < len(members) and members[at + 1] is args
    if follows and text[command.value.end : args.key_start] == "," + lead_of(text, command):
        edits.append(Edit(command.value.end, args.value.end, ""))  # wrap added the member
    else:
        end = array.commas[index] + 1 if index < len(array.commas) else original.end
        edits.append(Edit(array.start + 1, end, ""))
    return edits


def inspector_entry_text(fields: tuple[tuple[str, str], ...], python: str | None = None) -> str:
    """The entry ``--add-inspector`` adds: ``mcpeek mcp`` over stdio, on one line."""
    argv = stdio_launcher("mcp", python=python)
    pairs = [*(f"{quoted(k)}: {quoted(v)}" for k, v in fields), f'"command": {quoted(argv[0])}']
    pairs.append(f'"args": [{", ".join(map(quoted, argv[1:]))}]')
    return "{" + ", ".join(pairs) + "}"


def add_member_edit(text: str, obj: Object, key: str, value_text: str) -> Edit:
    """Add ``"key": value`` as the last member of ``obj``, indented like its siblings."""
    member = f"{quoted(key)}: {value_text}"
    if not obj.members:
        return Edit(obj.start + 1, obj.start + 1, member)
    last = obj.members[-1]
    return Edit(last.value.end, last.value.end, f",{lead_of(text, last)}{member}")


def remove_member_edit(text: str, obj: Object, member: Member) -> Edit:
    """Remove ``member`` from ``obj`` with the comma and indentation that came with it."""
    at = obj.members.index(member)
    if at > 0:
        return Edit(obj.members[at - 1].value.end, member.value.end, "")
    if len(obj.members) > 1:
        return Edit(member.key_start, obj.members[1].key_start, "")
    return Edit(member.key_start, member.value.end, "")
