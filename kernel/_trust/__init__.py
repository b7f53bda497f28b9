"""Secrets, bounds on nested data and the import of a ``module:attr`` path the caller trusts (the trust of spec
files is the spec kit's, ``zagent.speckit``)."""
