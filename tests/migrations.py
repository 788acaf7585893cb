"""Running a data migration's test: migrate back, build rows with the old
models, migrate forward, look; every migration is applied again after."""

from collections.abc import Iterator
from contextlib import contextmanager

from django.db import connection
from django.db.migrations.executor import MigrationExecutor


def migrate(targets):
    """Migrate the test database to `targets`; the app registry as of there."""
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets)
    return executor.loader.project_state(targets).apps


@contextmanager
def migrated_to(targets) -> Iterator:
    """The app registry as of `targets`, the database migrated there; back to
    the latest migrations at the end, whatever happened."""
    latest = MigrationExecutor(connection).loader.graph.leaf_nodes()
    try:
        yield migrate(targets)
    finally:
        migrate(latest)
