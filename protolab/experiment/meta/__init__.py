"""The metagame loop (`psro`): `protolab run` of a spec with a [meta] table, one ordinary run per
iteration."""
