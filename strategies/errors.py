"""The error every strategy and draft spec raises: one class for the whole strategies layer."""


class StrategyError(ValueError):
    """A strategy spec that cannot be used; the message says what was expected."""
