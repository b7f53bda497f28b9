"""A well-behaved tool plugin used by the tool conformance suite's own tests."""

import time


def zagent_register_tools(register):
    def forecast(city: str, days: int = 1) -> str:
        """Tell the weather.

        Args:
            city: the city to look up
            days: how many days ahead
        """
        return f"sunny in {city} for {days} day(s)"

    def nap(seconds: float) -> str:
        """Sleep a while, then say so.

        Args:
            seconds: how long to sleep
        """
        time.sleep(seconds)
        return "rested"

    register(forecast, toolset="weather", timeout=10)
    register(nap, toolset="weather", timeout=10)
