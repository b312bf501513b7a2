"""`protolab tune`: the balance search (`tune`) and its games as jobs (`tuneplay`, played through
jobs.py; `protolab power` plays its pilot the same way)."""
