from mcpeek.inspector.cli.main import main

raise SystemExit(main())
