"""The workflow plugin (in progress)."""
