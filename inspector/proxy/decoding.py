"""Undoing an HTTP content coding on a copy of a relayed body, piece by piece (sans-IO).

The relay forwards compressed bodies exactly as they are; only what it
records is decoded, so that the JSON-RPC messages inside a gzip response or
a deflated SSE stream still reach the capture. ``gzip`` and ``deflate`` are
always understood (zlib); ``br`` and ``zstd`` only when a library for them is
importable (``brotli``/``brotlicffi``, ``zstandard``), never a hard
dependency. :func:`body_decoder` answers ``None`` for an identity body, and a
:class:`BodyDecoder` that raises :class:`DecodeError` at the first piece it
cannot decode (an unknown coding, corrupt data, a truncated stream).
"""

from __future__ import annotations

import importlib
import zlib
from typing import Any, Protocol


class DecodeError(Exception):
    """The body could not be decoded; the message says why."""


class _Stage(Protocol):
    def feed(self, data: bytes) -> bytes: ...

    def finish(self) -> bytes: ...


class _Zlib:
    """gzip (wbits 31) or deflate: zlib-wrapped, as RFC 9110 says, or raw, as some servers send."""

    def __init__(self, coding: str) -> None:
        self._gzip = coding in ("gzip", "x-gzip")
        self._object: Any = zlib.decompressobj(31 if self._gzip else 15)
        self._started = False

    def feed(self, data: bytes) -> bytes:
        if not data:
            return b""
        try:
            out: bytes = self._object.decompress(data)
        except zlib.error:
            if self._gzip or self._started:
                raise
            self._object = zlib.decompressobj(-15)  # a raw deflate stream
            out = self._object.decompress(data)
        self._started = True
        return out

    def finish(self) -> bytes:
        out: bytes = self._object.flush()
        if self._started and not self._object.eof:
            raise zlib.error("the compressed stream ends early")
        return out


class _Brotli:
    def __init__(self, module: Any) -> None:
        self._object = module.Decompressor()

    def feed(self, data: bytes) -> bytes:
        process = getattr(self._object, "process", None) or self._object.decompress
        return bytes(process(data))

    def finish(self) -> bytes:
        return b""


class _Zstd:
    def __init__(self, module: Any) -> None:
        self._object = module.ZstdDecompressor().decompressobj()

    def feed(self, data: bytes) -> bytes:
        return bytes(self._object.decompress(data))

    def finish(self) -> bytes:
        return b""


def _optional(*names: str) -> Any:
    for name in names:
        try:
            return importlib.import_module(name)
        except ImportError:
            continue
    return None


def _stage(coding: str) -> _Stage:
    if coding in ("gzip", "x-gzip", "deflate"):
        return _Zlib(coding)
    if coding == "br" and (brotli := _optional("brotli", "brotlicffi")) is not None:
        return _Brotli(brotli)
    if coding == "zstd" and (zstandard := _optional("zstandard")) is not None:
        return _Zstd(zstandard)
    raise DecodeError(f"content coding {coding!r} is not supported here")


class BodyDecoder:
    """The codings of one ``Content-Encoding`` header, undone in reverse order."""

    def __init__(self, encoding: str, codings: list[str]) -> None:
        self.encoding = encoding  # the header's value, as recorded
        self._codings = codings
        self._stages: list[_Stage] | None = None

    def feed(self, data: bytes) -> bytes:
        """The decoded bytes ``data`` completes (possibly none)."""
        try:
            for stage in self._ready():
                data = stage.feed(data)
        except DecodeError:
            raise
        except Exception as exc:  # zlib.error, or a brotli/zstd binding's own error type
            raise DecodeError(f"{self.encoding} body does not decode: {exc}") from None
        return data

    def finish(self) -> bytes:
        """The last decoded bytes; raises when the body stopped mid-stream."""
        out = b""
        try:
            for stage in self._ready():
                out = stage.feed(out) + stage.finish()
        except DecodeError:
            raise
        except Exception as exc:
            raise DecodeError(f"{self.encoding} body does not decode: {exc}") from None
        return out

    def _ready(self) -> list[_Stage]:
        if self._stages is None:
            self._stages = [_stage(c) for c in reversed(self._codings)]
        return self._stages


def body_decoder(content_encoding: str | None) -> BodyDecoder | None:
    """A decoder for a body sent with this ``Content-Encoding``, or ``None`` for identity."""
    if not content_encoding:
        return None
    codings = [c.strip().lower() for c in content_encoding.split(",")]
    codings = [c for c in codings if c and c != "identity"]
    if not codings:
        return None
    return BodyDecoder(content_encoding, codings)
