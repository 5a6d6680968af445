"""What wrap did that the config itself cannot tell, kept beside it for unwrap.

Two things a wrapped config does not show: the original URL of an HTTP entry
pointed at a local proxy (``wrap --http``), and which stdio entries had no
``args`` member before wrap gave them one (an entry written
``"args": []`` must come back with it, one written without must come back
without). Both live in ``FILE.mcpeek-wrap.json`` (see ``configfile``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from mcpeek.inspector.clients.remote import Proxied


@dataclass
class WrapState:
    proxied: list[Proxied] = field(default_factory=list)
    #: (table label, server name) of each stdio entry whose ``args`` wrap added.
    args_added: list[tuple[str, str]] = field(default_factory=list)

    def copy(self) -> WrapState:
        return WrapState(list(self.proxied), list(self.args_added))

    def __bool__(self) -> bool:
        return bool(self.proxied or self.args_added)

    def to_json(self) -> dict[str, object]:
        return {
            "http": [record.as_json() for record in self.proxied],
            "args_added": [{"table": t, "server": s} for t, s in self.args_added],
        }

    @classmethod
    def from_json(cls, document: object) -> WrapState:
        """The state in a state file's JSON (ValueError when it is not one)."""
        if not isinstance(document, dict) or not isinstance(document.get("http", []), list):
            raise ValueError("not a mcpeek wrap state file")
        state = cls()
        for item in document.get("http", []):
            if not _has_strings(item, "table", "server", "original", "local"):
                raise ValueError("an http record is not table/server/original/local")
            state.proxied.append(
                Proxied(item["table"], item["server"], item["original"], item["local"])
            )
        added = document.get("args_added", [])
        if not isinstance(added, list) or not all(
            _has_strings(a, "table", "server") for a in added
        ):
            raise ValueError("an args_added record is not table/server")
        state.args_added = [(item["table"], item["server"]) for item in added]
        return state


def _has_strings(item: object, *keys: str) -> bool:
    return isinstance(item, dict) and all(isinstance(item.get(k), str) for k in keys)
