"""A tool that takes 20 ms, so a CLI batch runs long enough to be interrupted (tests copy it next
to their agent file, where the CLI trusts it)."""

import asyncio


async def lookup(topic: str) -> str:
    """Look a topic up (sleeps 20 ms)."""
    await asyncio.sleep(0.02)
    return f"notes on {topic}"
