"""The Textual terminal UI; the only package that imports textual."""
