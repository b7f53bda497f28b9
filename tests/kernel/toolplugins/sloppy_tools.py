"""A tool plugin breaking the conformance rules: prints at import, no docs, no timeout."""

import threading

print("loading sloppy tools")
threading.Thread(target=lambda: None, daemon=True).start()


def zagent_register_tools(register):
    import zagent

    def lookup(key):
        return key

    register(zagent.tool(lookup, timeout=None))
