"""Spec data as validated rows (book/data/*.yaml), figures from data, and the calculators of scripts/calc/.

The calculators are run in-process (calcs, calcrun); calcforms says what each web calculator shows.
"""
