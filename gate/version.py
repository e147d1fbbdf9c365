"""The package's version, in a module of its own so that any layer can name it.

Reports carry the version that wrote them; reading it from `gate/__init__` would make
the report and verdict layers import the package root, which imports the runner.
"""

__version__ = "0.1.0"
