"""Packaging shim: maps kernel/ to ``zagent`` and plugins/ to ``zagent.plugins``.

Metadata, dependencies and entry points live in setup.cfg; this file only
discovers sub-packages under the two mapped folders, so adding a plugin
package needs no packaging edit.
"""

import os

from setuptools import setup


def packages(root, prefix):
    found = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if not d.startswith(".") and d != "__pycache__"]
        if "__init__.py" in files:
            rel = os.path.relpath(folder, root)
            found.append(prefix if rel == "." else prefix + "." + rel.replace(os.sep, "."))
    return found


setup(
    packages=packages("kernel", "zagent") + packages("plugins", "zagent.plugins"),
    package_dir={"zagent": "kernel", "zagent.plugins": "plugins"},
)
