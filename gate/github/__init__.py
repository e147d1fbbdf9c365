"""The GitHub Action's edges: inputs, workflow commands, the sticky comment, the run."""
