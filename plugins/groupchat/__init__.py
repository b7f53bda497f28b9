"""The groupchat plugin (in progress)."""
