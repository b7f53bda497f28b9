"""Runs and events: ``RunContext``, the stash, events and spans, executors, sync twins, closing, the logger."""
