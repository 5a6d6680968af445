"""``python -m mcpeek ARGS``: the ``mcpeek`` command; :func:`run` is the installed
script's entry point too, so that a Ctrl-C while the command line is still being
loaded ends it with 130 and no traceback, however it was started."""


def run() -> int:
    """Load the command line and run it: its exit status (130 on Ctrl-C while loading)."""
    try:
        from mcpeek.inspector.cli.main import main
    except KeyboardInterrupt:
        return 130
    return main()


if __name__ == "__main__":
    raise SystemExit(run())
