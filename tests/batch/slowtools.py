"""A tool that takes a few milliseconds, so a CLI batch runs long enough to be interrupted (tests copy it next
to their agent file, where the CLI trusts it)."""

import asyncio


async def lookup(topic: str) -> str:
    """Look a topic up (sleeps 5 ms)."""
    await asyncio.sleep(0.005)
    return f"notes on {topic}"
