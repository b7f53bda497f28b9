"""The rails plugin (in progress)."""
