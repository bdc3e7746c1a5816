"""Worked examples that use the arena package; each folder has a README.md."""
