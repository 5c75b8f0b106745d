"""`python -m reshard`: reshardctl (reshard._command_line)."""

import sys

from reshard._command_line import main

sys.exit(main())
