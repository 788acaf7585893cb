"""Qualification and check items made from the project's own items (curation.gold.service)."""
