"""The skills plugin (in progress)."""
