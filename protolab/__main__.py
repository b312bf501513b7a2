"""`python -m protolab`: the same entry point as the `protolab` command."""

import sys

from protolab import main

sys.exit(main())
