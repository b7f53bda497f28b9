"""The react plugin (in progress)."""
