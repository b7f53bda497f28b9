"""The model path: the ``LLM`` interface, its inputs, replies, streams, parts, and resolving ``"provider:model"``."""
