"""zagent.speckit: the trust checks of plugins that load spec files (agents, workflows, group chats, skills).

A spec file is data: ``trust.resolve`` imports what it names only when it is trusted, ``paths`` keeps the files
it names in its folder, ``sizes`` bounds its counts and a model's options, ``specs.convert_spec`` turns it into
its Struct. The kernel never imports this package; plugins and the other kits do, on first use.
"""
