"""`protolab train`: the learned player's training loop (`train`), its spec (`trainspec`), its games
as jobs (`trainplay`, played through jobs.py) and the network fit (`fit`, the optional extra)."""
