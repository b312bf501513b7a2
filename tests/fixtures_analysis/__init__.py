"""Helpers for the analysis tests: a headless Chromium driven over the DevTools protocol."""
