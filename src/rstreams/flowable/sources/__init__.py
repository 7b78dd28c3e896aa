"""Flowable sources, one private module per source family."""
