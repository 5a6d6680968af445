"""``mcpeek export FILE --format har|otlp-json|otlp [-o OUT] [--endpoint URL]``.

* ``har``: the exchanges of an HTTP capture as HAR 1.2 (browsers' developer
  tools, mitmproxy), headers redacted as in the capture;
* ``otlp-json``: each flow as an OpenTelemetry span (MCP semantic
  conventions), in the OTLP JSON encoding: one export request per line,
  traces then metrics;
* ``otlp``: the same spans and histograms sent to an OTLP receiver:
  ``--endpoint http://HOST:4318`` (OTLP/HTTP, protobuf) or
  ``grpc://HOST:4317`` (OTLP/gRPC). Needs the ``otel`` extra, as does
  ``otlp-json`` (mcpeek is not on PyPI yet: in its clone,
  ``pip install '.[otel]'``).

``-o`` writes a new file (mode 0600; one that holds data needs ``--force``);
without it the document goes to stdout. See docs/export.md.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import sys
from pathlib import Path

from mcpeek.inspector.analysis.analyzer import DEFAULT_TIMEOUT
from mcpeek.inspector.capture.files import (
    CaptureFileError,
    open_beside,
    open_for_writing,
    write_all,
)
from mcpeek.inspector.capture.reader import CaptureError
from mcpeek.inspector.cli.base import Command, UsageError, refuse_overwriting
from mcpeek.inspector.export.endpoint import (
    BadEndpoint,
    Endpoint,
    MissingOtel,
    parse_endpoint,
    require_otel,
)

FORMATS = ("har", "otlp-json", "otlp")
DEFAULT_SEND_TIMEOUT = 10.0  # seconds a send to --endpoint may take, retries included


class ExportCommand(Command):
    name = "export"
    order = 45
    help = "export a capture as HAR 1.2 or OpenTelemetry traces (OTLP, OTLP JSON)"
    description = __doc__ or ""

    def configure(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("file", type=Path, metavar="FILE", help="capture file")
        parser.add_argument("--format", choices=FORMATS, required=True, help="what to export")
        parser.add_argument(
            "-o", "--output", type=Path, metavar="OUT", help="file to write (default: stdout)"
        )
        parser.add_argument(
            "--force", action="store_true", help="overwrite the -o file if it holds data"
        )
        parser.add_argument(
            "--endpoint",
            metavar="URL",
            help="otlp: the receiver, http(s)://HOST:PORT (OTLP/HTTP) or grpc(s)://HOST:PORT",
        )
        parser.add_argument(
            "--send-timeout",
            type=float,
            default=None,  # refused with har and otlp-json, as --endpoint is
            metavar="SECONDS",
            help="otlp: how long a send may take, retries included (default: 10)",
        )
        parser.add_argument(
            "--timeout",
            type=float,
            default=DEFAULT_TIMEOUT,
            metavar="SECONDS",
            help="declare a request unanswered after this long (default: 60)",
        )

    def run(self, args: argparse.Namespace) -> int:
        for option in ("timeout", "send_timeout"):
            value = getattr(args, option)
            if value is not None and (not math.isfinite(value) or value <= 0):
                flag = "--" + option.replace("_", "-")
                raise UsageError(f"{flag} must be a finite number of seconds above 0")
        endpoint = self._endpoint(args)
        if args.format != "har":
            try:
                require_otel()
            except MissingOtel as exc:
                raise UsageError(str(exc)) from None
        if args.output is not None and args.format == "otlp":
            raise UsageError("-o goes with --format har or otlp-json; otlp sends to --endpoint")
        refuse_overwriting(args.output, args.file, "-o")
        if args.output is not None and not args.output.parent.is_dir():
            # An output file is not a capture (-w makes its private directories):
            # a missing directory is more likely a typo, refused as cp or curl -o do.
            raise UsageError(f"cannot write {args.output}: no directory {args.output.parent}")
        try:
            if args.format == "har":
                text, problems = self._har(args)
            elif args.format == "otlp-json":
                text, problems = self._otlp_json(args)
            else:
                assert endpoint is not None
                return self._send(args, endpoint)
        except CaptureError as exc:
            raise UsageError(str(exc)) from None
        self._say_problems(args.file, problems)
        self._write(args, text)
        return 0

    @staticmethod
    def _endpoint(args: argparse.Namespace) -> Endpoint | None:
        if args.format != "otlp":
            for flag, value in (
                ("--endpoint", args.endpoint),
                ("--send-timeout", args.send_timeout),
            ):
                if value is not None:
                    raise UsageError(f"{flag} goes with --format otlp")
            return None
        if args.endpoint is None:
            raise UsageError("--format otlp needs --endpoint URL, e.g. http://127.0.0.1:4318")
        try:
            return parse_endpoint(args.endpoint)
        except BadEndpoint as exc:
            raise UsageError(str(exc)) from None

    @staticmethod
    def _har(args: argparse.Namespace) -> tuple[str, list[str]]:
        from mcpeek.inspector.export.har import NotHttpCapture, capture_har

        try:
            document, problems = capture_har(args.file, args.timeout)
        except NotHttpCapture as exc:
            raise UsageError(f"{args.file}: {exc}") from None
        return json.dumps(document, indent=1, ensure_ascii=False) + "\n", problems

    @staticmethod
    def _otlp_json(args: argparse.Namespace) -> tuple[str, list[str]]:
        from mcpeek.inspector.export.collect import capture_spans
        from mcpeek.inspector.export.otlp import otlp_json

        spans, problems = capture_spans(args.file, args.timeout)
        return otlp_json(spans), problems

    def _send(self, args: argparse.Namespace, endpoint: Endpoint) -> int:
        from mcpeek.inspector.export.collect import capture_spans
        from mcpeek.inspector.export.otlp import Sender

        spans, problems = capture_spans(args.file, args.timeout)
        self._say_problems(args.file, problems)
        reasons: list[str] = []
        send_timeout = DEFAULT_SEND_TIMEOUT if args.send_timeout is None else args.send_timeout
        sender = Sender(endpoint, send_timeout, reasons.append)
        sender.emit(spans)
        sender.close()
        if reasons:
            raise UsageError(
                f"cannot send to the OTLP endpoint {endpoint.url}: {reasons[-1]} "
                f"({sender.spans.failed} of {len(spans)} spans not sent)"
            )
        print(f"mcpeek: {len(spans)} spans sent to {endpoint.url}", file=sys.stderr)
        return 0

    @staticmethod
    def _say_problems(path: Path, problems: list[str]) -> None:
        for problem in problems:
            print(f"mcpeek: {path}: {problem}", file=sys.stderr)

    @staticmethod
    def _write(args: argparse.Namespace, text: str) -> None:
        data = text.encode("utf-8", "surrogatepass")
        if args.output is None:
            try:
                sys.stdout.buffer.write(data)
                sys.stdout.flush()
            except BrokenPipeError:  # `mcpeek export … | head`: the reader has seen enough
                os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            return
        path: Path = args.output
        existed = os.path.lexists(path)
        try:
            fd = open_for_writing(path, force=args.force, empty=False)
        except CaptureFileError as exc:
            raise UsageError(f"cannot write {path}: {exc}") from None
        except OSError as exc:
            raise UsageError(f"cannot write {path}: {exc.strerror or exc}") from None
        # Written beside, then renamed over it: a write that fails (a full disk), or
        # Ctrl-C, leaves the old file as it was (--force), or no half-written new one.
        replaced = False
        try:
            beside_fd, beside = open_beside(path)
            try:
                write_all(beside_fd, data)
            except BaseException:
                os.unlink(beside)
                raise
            finally:
                os.close(beside_fd)
            os.replace(beside, path)
            replaced = True
        except OSError as exc:
            raise UsageError(f"cannot write {path}: {exc.strerror or exc}") from None
        finally:
            if not replaced and not existed:
                with contextlib.suppress(OSError):
                    os.unlink(path)  # (the empty file this run made, still locked by it)
            os.close(fd)
