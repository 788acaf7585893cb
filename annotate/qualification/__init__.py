"""Qualification and training (issue 36 item 1)."""
