"""``python -m mcpeek ARGS``: the ``mcpeek`` command."""

from mcpeek.inspector.cli.main import main

raise SystemExit(main())
