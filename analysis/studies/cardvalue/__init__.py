"""The card-value study (`protolab cardvalue`): an A/B run of a fixed shape read as its baseline arm's
plain report, with the card-value table (values.py) from every arm."""
