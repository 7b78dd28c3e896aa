"""The operator toolkit (seed 004). Each idiom is written and explained once, here."""
