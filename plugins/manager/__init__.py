"""The manager plugin (in progress)."""
