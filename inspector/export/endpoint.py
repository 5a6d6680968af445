"""Where OTLP goes, and whether the optional ``otel`` extra is installed.

No OpenTelemetry import here: a command checks its arguments and the extra
with this module before anything loads the SDK.
"""

from __future__ import annotations

import importlib.util
from typing import Literal
from urllib.parse import urlsplit

import msgspec

INSTALL_HINT = "OTLP export needs the otel extra: pip install '.[otel]' in mcpeek's clone"
NEEDED_MODULES = (
    "opentelemetry.sdk",
    "opentelemetry.exporter.otlp.proto.http",
    "opentelemetry.exporter.otlp.proto.grpc",
)


class MissingOtel(Exception):
    """The ``otel`` extra is not installed; ``str()`` says how to install it."""


class BadEndpoint(ValueError):
    """An OTLP endpoint mcpeek cannot use; ``str()`` says why, in one line."""


class Endpoint(msgspec.Struct, frozen=True):
    """An OTLP receiver: ``http``/``https`` for OTLP/HTTP (protobuf), ``grpc``
    (plaintext) or ``grpcs`` (TLS) for OTLP/gRPC."""

    url: str
    protocol: Literal["http/protobuf", "grpc"]
    secure: bool

    def signal_url(self, signal: Literal["traces", "metrics"]) -> str:
        """The URL one signal is sent to: for OTLP/HTTP, the base URL plus ``/v1/<signal>``
        (as OTEL_EXPORTER_OTLP_ENDPOINT does), unless the URL names a signal path already;
        for gRPC, ``host:port``."""
        parts = urlsplit(self.url)
        if self.protocol == "grpc":
            return parts.netloc
        path = parts.path.rstrip("/")
        for known in ("/v1/traces", "/v1/metrics"):
            if path.endswith(known):
                path = path[: -len(known)]
        return parts._replace(path=f"{path}/v1/{signal}").geturl()


def parse_endpoint(url: str) -> Endpoint:
    """The endpoint ``url`` names, or :class:`BadEndpoint`."""
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 (a bad port raises here, not in the exporter's thread)
    except ValueError as exc:
        raise BadEndpoint(f"bad OTLP endpoint {url!r}: {exc}") from None
    if not parts.hostname:
        raise BadEndpoint(
            f"bad OTLP endpoint {url!r}: give a URL such as http://127.0.0.1:4318 "
            "(OTLP/HTTP) or grpc://127.0.0.1:4317 (OTLP/gRPC)"
        )
    if parts.scheme in ("http", "https"):
        return Endpoint(url, "http/protobuf", parts.scheme == "https")
    if parts.scheme in ("grpc", "grpcs"):
        return Endpoint(url, "grpc", parts.scheme == "grpcs")
    raise BadEndpoint(
        f"bad OTLP endpoint {url!r}: the scheme must be http or https (OTLP/HTTP), "
        "grpc or grpcs (OTLP/gRPC)"
    )


def require_otel() -> None:
    """Raise :class:`MissingOtel` unless the OpenTelemetry SDK and exporters import."""
    for name in NEEDED_MODULES:
        try:
            found = importlib.util.find_spec(name) is not None
        except ModuleNotFoundError:
            found = False
        if not found:
            raise MissingOtel(INSTALL_HINT)
