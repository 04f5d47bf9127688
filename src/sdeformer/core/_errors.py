"""The one exception type for bad input (docs/design.md: one place for bad-input errors)."""

from __future__ import annotations


class ConfigError(ValueError):
    """Bad input: the message names the parameter, the value and what is allowed, on one line."""

    def __init__(self, parameter: str, value: object, allowed: str):
        self.parameter = parameter
        self.value = value
        self.allowed = allowed
        super().__init__(f"invalid {parameter}={value!r}: {allowed}")
