"""The spec checks: pure, synchronous state machines over the record stream."""
