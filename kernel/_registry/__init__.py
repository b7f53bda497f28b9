"""Registries: the named things plugins register, the ``register`` callable and the look-ups."""
