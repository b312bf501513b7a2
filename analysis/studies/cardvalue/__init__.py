"""The card-value study (`protolab cardvalue`): an A/B run of a fixed shape read as its baseline arm's
balance report, with the card-value table (analysis/studies/balance/card_values.py) from every arm."""
