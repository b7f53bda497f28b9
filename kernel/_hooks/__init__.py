"""Plugins and hooks: discovery and registration, the hook specifications, calling hooks, rails' answers."""
