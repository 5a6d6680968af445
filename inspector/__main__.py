"""``python -m mcpeek.inspector``: the ``mcpeek`` command line, as the installed script runs it."""

from mcpeek.inspector.cli.main import main

raise SystemExit(main())
