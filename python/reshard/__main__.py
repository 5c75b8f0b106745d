"""`python -m reshard`: the command line (reshard.cli)."""

import sys

from reshard.cli import main

sys.exit(main())
