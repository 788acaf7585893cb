"""Running a data migration's test: a database as the old code migrated it,
rows made with the old models, migrate forward, look; the test database is
at the latest migrations again after, whatever happened.

Going back, Django renders the state before each migration it unapplies,
unapplies it, and applies it again at the end: 12-34 s a test on
PostgreSQL. So where that is the longer way, the old database is built
forward instead, to the same migrations: from a copy of the apps that need
no annotate migration (Django's own, axes, DRF's tokens), taken once per
process (built forward from an empty database), annotate's and curation's
migrations are applied up to where the way back would have stopped; and the
latest database comes back from a copy taken once per process. That every
migration goes back and forward again is checked once, by
tests/test_migrations_round_trip.py (docs/decisions.md, "Testing")."""

import atexit
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager

from django.db import connection
from django.db.migrations.executor import MigrationExecutor

FIRST = ("annotate", "0001_initial")


def migrate(targets):
    """Migrate the test database to `targets`; the app registry as of there."""
    executor = MigrationExecutor(connection)
    executor.migrate(targets)
    return executor.loader.project_state([t for t in targets if t[1]]).apps


@contextmanager
def migrated_to(targets) -> Iterator:
    """The app registry as of `targets`, the database migrated there as
    `manage.py migrate` would (every migration that needs a later one
    unapplied, the others applied); back to the latest migrations at the
    end, whatever happened."""
    kept = _kept(targets)
    copies = database_copies() if kept is not None else None
    if copies is None:  # a few migrations back, or no copy: by the executor
        with unapplied_to(targets) as apps:
            yield apps
        return
    try:
        copies.restore("base")
        executor = MigrationExecutor(connection)
        executor.migrate(kept)
        yield executor.loader.project_state(targets).apps
    finally:
        copies.restore("latest")


@contextmanager
def unapplied_to(targets) -> Iterator:
    """As migrated_to(), the way `manage.py migrate` goes: every later
    migration unapplied, and all applied again at the end."""
    latest = MigrationExecutor(connection).loader.graph.leaf_nodes()
    try:
        yield migrate(targets)
    finally:
        migrate(latest)


def _kept(targets) -> list | None:
    """The last migration of each app that stays applied when going back to
    `targets` (their union is what stays), or None where going back is the
    shorter way (a few migrations back: about three times the work of
    applying each once, against applying every kept annotate and curation
    migration)."""
    executor = MigrationExecutor(connection)
    graph = executor.loader.graph
    back = {
        (migration.app_label, migration.name) for migration, _ in executor.migration_plan(targets)
    }
    kept = _all(graph) - back
    forward = {node for node in kept if FIRST in graph.forwards_plan(node)}
    if len(forward) >= 3 * len(back):
        return None
    return _last_of_each_app(graph, kept)


def _all(graph) -> set:
    return set().union(*(graph.forwards_plan(leaf) for leaf in graph.leaf_nodes()))


def _last_of_each_app(graph, nodes: set) -> list:
    """The targets that migrate an empty database to `nodes` (a set that
    holds what each of its migrations needs)."""
    return [
        node
        for node in nodes
        if not any(
            child in nodes and child[0] == node[0] for child in graph.node_map[node].children
        )
    ]


def _base() -> list:
    """The apps that need no annotate migration, at their latest."""
    graph = MigrationExecutor(connection).loader.graph
    nodes = {node for node in _all(graph) if FIRST not in graph.forwards_plan(node)}
    return _last_of_each_app(graph, nodes)


# --- Copies of the test database, taken once per test process -----------------------------


class _SQLiteCopies:
    """Copies of the test database in memory, by SQLite's backup API."""

    def __init__(self):
        self.copies = {}

    def take(self, label: str):
        connection.ensure_connection()
        self.copies[label] = sqlite3.connect(":memory:", check_same_thread=False)
        connection.connection.backup(self.copies[label])

    def restore(self, label: str | None):
        """The copy `label` back in the test database (None: an empty one)."""
        connection.ensure_connection()
        copy = self.copies[label] if label else sqlite3.connect(":memory:")
        copy.backup(connection.connection)


class _PostgresCopies:
    """Copies of the test database as template databases (CREATE DATABASE …
    TEMPLATE), made through a connection of the driver's own to the server's
    `postgres` database; dropped when the process ends."""

    def __init__(self):
        self.name = connection.settings_dict["NAME"]

    def take(self, label: str):
        copy = self._copy(label)
        connection.close()  # a template must have no other session
        self._admin(
            f'DROP DATABASE IF EXISTS "{copy}"', f'CREATE DATABASE "{copy}" TEMPLATE "{self.name}"'
        )
        atexit.register(self._admin, f'DROP DATABASE IF EXISTS "{copy}" WITH (FORCE)')

    def restore(self, label: str | None):
        """The copy `label` back in the test database (None: an empty one)."""
        connection.close()  # Django connects again at the next query
        template = f' TEMPLATE "{self._copy(label)}"' if label else ""
        self._admin(
            f'DROP DATABASE "{self.name}" WITH (FORCE)', f'CREATE DATABASE "{self.name}"{template}'
        )

    def _copy(self, label: str) -> str:
        return f"{self.name[: 62 - len(label)]}_{label}"

    def _admin(self, *statements: str) -> None:
        import psycopg

        settings = connection.settings_dict
        params = {"dbname": "postgres", "host": settings["HOST"], "port": settings["PORT"]}
        params |= {"user": settings["USER"], "password": settings["PASSWORD"]}
        with psycopg.connect(**{k: v for k, v in params.items() if v}, autocommit=True) as admin:
            for statement in statements:
                admin.execute(statement)


_COPIES: list = []


def database_copies():
    """This process's copies, taken at the first call (the database is then
    at the latest migrations, as every test finds it): "latest", and
    "base", the apps that need no annotate migration at their latest, built
    forward from an empty database; None while they cannot be taken
    (another session holds the database). tests/test_migrations_round_trip.py
    checks they are taken."""
    if not _COPIES:
        try:
            copies = {"sqlite": _SQLiteCopies, "postgresql": _PostgresCopies}[connection.vendor]()
            copies.take("latest")
        except Exception:
            return None  # tried again at the next call
        try:
            copies.restore(None)
            migrate(_base())
            copies.take("base")
        finally:
            copies.restore("latest")
        _COPIES.append(copies)
    return _COPIES[0]
