"""``python -m mcpeek ARGS``: the ``mcpeek`` command."""

try:
    from mcpeek.inspector.cli.main import main
except KeyboardInterrupt:  # Ctrl-C while the command line was still being loaded
    raise SystemExit(130) from None

raise SystemExit(main())
