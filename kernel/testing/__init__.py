"""zagent.testing: a kit for plugin authors, registered as a pytest plugin (``pytest11``).

Fixtures and the hook recorder live in submodules; conformance suites
(``zagent.testing.providers`` ...) are imported explicitly by the tests that use them.
"""
