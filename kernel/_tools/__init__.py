"""Tools: the ``Tool`` class, the tool registry edits, the one tool-call path and the threads sync tools run in."""
