"""Checks of the book, each defect reported once through the diagnostics channel: sources, nav, built site."""
