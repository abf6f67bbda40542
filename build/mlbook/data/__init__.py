"""Spec data as validated rows (book/data/*.yaml) and the figures drawn from data and cost models."""
