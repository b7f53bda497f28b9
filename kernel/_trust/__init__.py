"""Trust and limits: secrets, bounds on nested data, the ``module:attr`` resolver and the checks of spec values."""
