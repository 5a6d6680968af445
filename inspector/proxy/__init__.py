"""The relays: they forward bytes first and turn what they forwarded into records."""
