"""The acceptance constraints of an expansion (TextAttack's *constraints*): the
checks on one masked-LM fill, the tunable named constraints, fluency and
the corpus evidence they read."""
