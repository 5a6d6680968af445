"""Replay: mock servers from captures (``mcpeek serve``) and client replay (``mcpeek replay``)."""
