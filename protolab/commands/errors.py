"""The command line's own error: light enough for `protolab --version` to import."""

from __future__ import annotations


class UsageError(Exception):
    """Bad input from the user: printed as one line, exit status 2."""
