"""Data shipped with protolab: official protocol files (protocols/) and example experiments."""
