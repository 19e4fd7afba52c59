"""Training and conversion code: imported only by the `build` and `harden train` commands, never at runtime."""
