"""A third-party tool plugin, built and pip-installed like a real distribution, is found by ``Kernel()``."""

import os
import subprocess
import sys
import textwrap

import pytest

PYPROJECT = '''
[build-system]
requires = ["setuptools>=61"]
build-backend = "setuptools.build_meta"

[project]
name = "zagent-weather-demo"
version = "0.3.1"

[project.entry-points.zagent]
weather = "zagent_weather_demo"

[tool.setuptools]
py-modules = ["zagent_weather_demo"]
'''

MODULE = '''
"""A third party's zagent tool plugin."""

def zagent_register_tools(register):
    def forecast(city: str, days: int = 1) -> str:
        """Tell the weather.

        Args:
            city: where.
        """
        return f"sunny in {city} for {days} day(s)"

    register(forecast, toolset="weather")


def zagent_register_providers(register):
    register("echo", lambda model, **options: EchoLLM(provider="echo", model=model))


from zagent import LLM, Completion, Message


class EchoLLM(LLM):
    """A third party's provider: answers with the last message."""

    async def _acomplete(self, request):
        return Completion(message=Message(role="assistant", content="echo: " + request.messages[-1].content),
                          model=self.model)
'''

CHECK = '''
import json, zagent
k = zagent.Kernel()
info = {p.name: p for p in k.plugins()}["weather"]
t = k.tool("forecast")
r = k.run_tool({"name": "forecast", "arguments": {"city": "Oslo"}})
print(json.dumps([info.distribution, info.version, t.toolset, t.parameters["required"], r.content]))
'''


@pytest.fixture
def installed_demo(tmp_path):
    """``pip install --target`` a freshly written distribution; yield the target dir (removed with tmp_path)."""
    project = tmp_path / "project"
    project.mkdir()
    (project / "pyproject.toml").write_text(PYPROJECT)
    (project / "zagent_weather_demo.py").write_text(textwrap.dedent(MODULE))
    target = tmp_path / "site"
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation",
         "--disable-pip-version-check", "--no-index", "--target", str(target), str(project)],
        capture_output=True, text=True)
    if proc.returncode != 0:
        pytest.fail(f"pip install of the demo distribution failed:\n{proc.stdout}\n{proc.stderr}")
    yield target


def test_installed_distribution_adds_its_tool(installed_demo):
    """A pip-installed distribution with a ``zagent`` entry point adds its tool to a new ``Kernel()``."""
    env = {**os.environ, "PYTHONPATH": str(installed_demo)}
    env.pop("ZAGENT_PLUGINS", None)
    proc = subprocess.run([sys.executable, "-c", CHECK], capture_output=True, text=True, env=env)
    assert proc.returncode == 0, proc.stderr
    dist, version, toolset, required, content = __import__("json").loads(proc.stdout.strip().splitlines()[-1])
    assert (dist, version, toolset, required) == ("zagent_weather_demo", "0.3.1", "weather", ["city"])
    assert content == "sunny in Oslo for 1 day(s)"


PROVIDER_CHECK = '''
import json, zagent
k = zagent.Kernel()
llm = k.llm()
print(json.dumps([llm.name, llm.complete("hi").text]))
'''


def test_installed_distribution_adds_its_provider_selected_by_env(installed_demo):
    """A pip-installed provider resolves through entry points, and ZAGENT_MODEL selects it."""
    env = {**os.environ, "PYTHONPATH": str(installed_demo), "ZAGENT_MODEL": "echo:parrot-1"}
    env.pop("ZAGENT_PLUGINS", None)
    proc = subprocess.run([sys.executable, "-c", PROVIDER_CHECK], capture_output=True, text=True, env=env)
    assert proc.returncode == 0, proc.stderr
    name, text = __import__("json").loads(proc.stdout.strip().splitlines()[-1])
    assert (name, text) == ("echo:parrot-1", "echo: hi")


def test_installed_distribution_can_be_disabled(installed_demo):
    """``ZAGENT_DISABLE_PLUGINS=weather`` keeps the installed plugin out, without importing it."""
    env = {**os.environ, "PYTHONPATH": str(installed_demo), "ZAGENT_DISABLE_PLUGINS": "weather"}
    code = "import sys, zagent; k = zagent.Kernel(); print('forecast' in k.registries['tools'], 'zagent_weather_demo' in sys.modules)"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert proc.stdout.split() == ["False", "False"], proc.stderr
