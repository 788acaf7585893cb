"""Training mixes: several releases or projects' decided pairs, filtered,
capped or weighted, deduplicated, written in the release's TRL layout
(docs/training-mixes.md). rows.py (pure selection), files.py (the folder,
no Django), build.py (the Celery-run build), service.py (creating one, who
may mix what), forms.py, views.py, tasks.py (task name pinned)."""
