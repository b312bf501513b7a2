"""One module per group of `protolab` subcommands; each defines `add_commands(subparsers)`."""
