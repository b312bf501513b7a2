"""`python -m sim.cards.vocabulary --markdown` (and the other tables): print the generated docs."""

import sys

from sim.cards.vocabulary.docs import main

sys.exit(main())
