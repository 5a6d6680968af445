"""Headless renderings of flows (text lines, JSON objects) shared by ``show`` and the proxies."""
