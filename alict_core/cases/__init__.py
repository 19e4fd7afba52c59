"""Test cases as data (MFT / INV / DIR), built from seeds and accepted expansions, and their
automatic validity checks."""
