"""The training study: a `protolab train` folder (train.json) read as tables (training.py), and the
model card written from it (modelcard.py)."""
