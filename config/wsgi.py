import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
application = get_wsgi_application()

# The embedded SQLite default: WAL checkpoints off the votes' path
# (config/sqlite_writes.py). Nothing on PostgreSQL.
from config.sqlite_writes import start_background_checkpoints  # noqa: E402

start_background_checkpoints()
