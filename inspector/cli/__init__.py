"""The command line, mcpeek's composition root: it wires the core to the front ends."""
