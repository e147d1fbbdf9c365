"""`python -m gate` is the same as the `chaos-gate` command."""

import sys

from gate.cli import main

sys.exit(main())
