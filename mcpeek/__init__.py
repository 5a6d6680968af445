"""mcpeek: a man-in-the-middle inspector for the Model Context Protocol.

Everything mcpeek installs lives under this one import name, so that no other
distribution can shadow it: ``mcpeek.inspector`` (the headless core, the CLI
and the pytest plugin), ``mcpeek.rules`` (the spec checks) and ``mcpeek.tui``
(the viewer). In a clone of the repository those are the top-level folders
``inspector/``, ``rules/`` and ``tui/``, reached through the symbolic links in
this folder; the wheel maps the folders here (``[tool.hatch.build]`` in
pyproject.toml).
"""
