"""Flowable operators, one private module per operator family (named after RxJava's operator)."""
