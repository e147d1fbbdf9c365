"""An MCP server whose interpreter lacks a package it imports: it dies before it answers."""

import sqlalchemy_is_not_installed_here  # noqa: F401

print("never reached")
