"""Exports of captures for other tools: OpenTelemetry traces (OTLP) and HAR 1.2.

A front end beside the CLI: it reads captures through the one loop
(:func:`~mcpeek.inspector.capture.run.run_capture`) and takes the flows from
the Analyzer and the violations from the rule engine. ``mcpeek export`` and
the proxies' ``--otlp`` use it; see docs/export.md.

* :mod:`.spans` maps flows to spans (no OpenTelemetry needed), following the
  conventions pinned in :mod:`.semconv`;
* :mod:`.endpoint` says where spans go and whether the ``otel`` extra is there;
* :mod:`.otel` and :mod:`.otlp` drive the OpenTelemetry SDK and its exporters;
* :mod:`.har` builds the HAR 1.2 document of an HTTP capture;
* :mod:`.follow` is the background process behind ``--otlp``.
"""
