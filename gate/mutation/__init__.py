"""Mutation stage: seeded, offline perturbations of the golden inputs."""

from gate.mutation.engine import Mutation, mutate
from gate.mutation.mutators import DEFAULT_WEIGHTS, MUTATORS
from gate.mutation.text import Preserve

__all__ = ["DEFAULT_WEIGHTS", "MUTATORS", "Mutation", "Preserve", "mutate"]
