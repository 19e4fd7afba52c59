"""CLI commands: one module each, exposing ``register(subparsers)`` that sets ``handler``."""
