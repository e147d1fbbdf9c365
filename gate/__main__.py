"""`python -m gate` is the same as the `chaos-gate` command."""

from gate.cli import console_entry

console_entry()
