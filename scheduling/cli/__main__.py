"""`python -m scheduling.cli ...`: the same as the `dq` console script."""

import sys

from scheduling.cli.app import main

sys.exit(main())
