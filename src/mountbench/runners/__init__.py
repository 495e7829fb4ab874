"""Runners turn one plan item into one sample. They never print and never touch the store."""
