"""A provider that breaks a rule of the provider kit fails with a message saying what was expected."""

pytest_plugins = ["pytester"]

BROKEN = '''
from zagent import LLM, Completion, Message
from zagent.testing.providers import ProviderTests


class NoText(LLM):
    async def _acomplete(self, request):
        return Completion(message=Message(role="assistant", content=""), model=self.model)


def zagent_register_providers(register):
    register("notext", lambda model, **options: NoText(provider="notext", model=model))


class TestNoText(ProviderTests):
    plugins = [__import__(__name__)]
    model = "notext:m"
    supports_tools = False
'''


def test_a_broken_provider_fails_the_kit_with_what_was_expected(pytester):
    """A provider whose replies have no text fails with the kit's explanation, not a bare AssertionError."""
    pytester.makepyfile(test_broken=BROKEN)
    result = pytester.runpytest_subprocess("-q", "-k", "returns_assistant_text", "-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*the reply to 'Say hello.' should have text, got ''*"])


def test_the_kit_s_asserts_are_rewritten_by_pytest(pytester):
    """Asserts inside zagent.testing.providers show their compared values (pytest's assertion rewriting)."""
    pytester.makepyfile(test_broken=BROKEN.replace("supports_tools = False", "supports_tools = False\n    secret = 'notext'"))
    result = pytester.runpytest_subprocess("-q", "-k", "secret_never", "-p", "no:cacheprovider")
    result.stdout.fnmatch_lines(["*the API key shows in repr(llm)*", "*assert 'notext' not in *"])
