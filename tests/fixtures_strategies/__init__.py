"""Helpers for the strategies tests: positions to decide at."""
