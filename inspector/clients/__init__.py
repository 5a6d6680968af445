"""MCP client configurations: find them, route their servers through mcpeek and back.

``mcpeek wrap``/``unwrap`` edit a client's own config file (Claude Desktop,
Claude Code, Cursor, VS Code). The edits are surgical: the file is read with
a JSON/JSONC reader that keeps the position of every value
(:mod:`.jsonc`), and only the spans of the values that change are rewritten,
so comments, key order, unknown keys and indentation survive byte for byte.
Headless core: no front end imports, no printing.
"""
