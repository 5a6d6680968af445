"""Acting on traffic: faults (``--fault``/``--faults``) and user scripts (``-s``).

With nothing configured the relays never load this package: their fast path
is unchanged. When actions are configured, a relay hands each complete
JSON-RPC message to an :class:`~mcpeek.inspector.act.actor.Actor` before it
forwards it, and carries out the :class:`~mcpeek.inspector.act.verdicts.Outcome`
it answers with (forward, edit, drop, answer in place, delay, disconnect,
corrupt). The decisions are sans-IO: the actor never touches a socket.

A script imports its verdicts from here::

    from mcpeek.inspector.act import Drop, Edit, Reply
"""

from mcpeek.inspector.act.verdicts import Drop, Edit, Message, Reply

__all__ = ["Drop", "Edit", "Message", "Reply"]
