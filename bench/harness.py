"""What the benches share: their own PostgreSQL database, Django set up against
it (in this process or in a child), measured children, COPY loading and the
results table.

Every bench owns one database, named by DATABASE_URL (its name must start with
``bench``): dropped and created at the start, dropped at the end. Nothing here
imports Django, psycopg or numpy at module level, so a parent process that
only starts children stays small (a child starts with its parent's peak RSS
in ``ru_maxrss``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterable, Sequence
from datetime import datetime
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

ROOT = Path(__file__).resolve().parent.parent


# --- The bench database -----------------------------------------------------------------


def database_url(default: str) -> str:
    """DATABASE_URL, or `default` (saying so on stderr) when it is not set."""
    url = os.environ.get("DATABASE_URL", "")
    if not url:
        url = default
        print(f"DATABASE_URL is not set; using {url}", file=sys.stderr)
    return url


def bench_database(url: str) -> tuple[str, str]:
    """The bench database's name and a URL to the server's `postgres` database.

    Exits unless `url` is a PostgreSQL URL to a database named ``bench...``."""
    parts = urlsplit(url)
    if parts.scheme not in ("postgres", "postgresql"):
        raise SystemExit(f"DATABASE_URL must be a PostgreSQL URL, not {parts.scheme}://")
    name = parts.path.lstrip("/")
    if not name.startswith("bench"):
        # The bench drops and recreates its database: never someone else's.
        raise SystemExit(f"refusing to use database {name!r}: its name must start with 'bench'")
    return name, urlunsplit(parts._replace(path="/postgres"))


def recreate_database(url: str, *, create: bool = True) -> None:
    """Drop the bench database (closing its connections), then create it empty
    unless `create` is false."""
    import psycopg
    from psycopg import sql

    name, admin_url = bench_database(url)
    with psycopg.connect(admin_url, autocommit=True) as conn:
        ident = sql.Identifier(name)
        conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(ident))
        if create:
            conn.execute(sql.SQL("CREATE DATABASE {}").format(ident))


def finish(url: str, tmp: Path, *, keep: bool) -> None:
    """A bench's teardown: close Django's connections (if it was set up),
    remove its temporary folder, drop its database unless `keep`."""
    import shutil

    try:
        from django.db import connections

        connections.close_all()
    except Exception:  # Django may not be set up yet
        pass
    shutil.rmtree(tmp, ignore_errors=True)
    if keep:
        print(f"\nkept database {bench_database(url)[0]}", file=sys.stderr)
    else:
        recreate_database(url, create=False)


# --- Django against the bench database ------------------------------------------------------


def django_environ(url: str, tmp: Path, **overrides: str) -> dict[str, str]:
    """The settings variables of a bench: its database, files under `tmp`, DEBUG
    off (it would keep every query in memory), quiet logs; `overrides` added."""
    return {
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "DATABASE_URL": url,
        "DATA_DIR": str(tmp / "data"),
        "MEDIA_ROOT": str(tmp / "media"),
        "DEBUG": "false",
        "LOG_LEVEL": "WARNING",
        **overrides,
    }


def child_env(url: str, tmp: Path, **overrides: str) -> dict[str, str]:
    """The environment of a child process: this one's, without REDIS_URL (nothing
    may reach someone's Redis or worker), plus `django_environ` and the project
    on PYTHONPATH."""
    env = dict(os.environ)
    env.pop("REDIS_URL", None)
    env.update(
        django_environ(url, tmp, **overrides),
        PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
    )
    return env


def migrate() -> None:
    """Apply every migration, silently (Django must be set up)."""
    from django.core.management import call_command

    call_command("migrate", verbosity=0, interactive=False)


def setup_django(url: str, tmp: Path, **overrides: str) -> None:
    """Set up Django in this process against the bench database, and migrate."""
    os.environ.pop("REDIS_URL", None)  # nothing may reach someone's Redis or a real broker
    os.environ.update(django_environ(url, tmp, **overrides))
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    migrate()


# --- Children and their memory ----------------------------------------------------------------


def run_child(
    script: str, args: Sequence[str], env: dict[str, str], *, failure: str, stderr: bool = True
) -> dict:
    """Run `script` with `args` in a fresh Python in ROOT; return the JSON on the
    last line of its stdout.

    With `stderr` false the child's stderr is not captured but passes through.
    On failure its captured output is written to stderr and the bench exits with
    `failure` (``{returncode}`` in it is filled in)."""
    proc = subprocess.run(
        [sys.executable, script, *args],
        env=env,
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE if stderr else None,
        text=True,
    )
    if proc.returncode != 0:
        sys.stderr.write(proc.stdout + (proc.stderr or ""))
        raise SystemExit(failure.format(returncode=proc.returncode))
    return json.loads(proc.stdout.strip().splitlines()[-1])


def vm_hwm_kib() -> int | None:
    """The process's own peak RSS (Linux VmHWM), a cross-check of ru_maxrss."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    except OSError:
        pass
    return None


def mb(kib: float) -> float:
    """KiB (as ru_maxrss counts) in decimal megabytes."""
    return kib * 1024 / 1e6


def memory(measured: dict) -> str:
    """A child's peak memory (its ``maxrss_kib``, and ``vm_hwm_kib`` if known) in MB."""
    text = f"{mb(measured['maxrss_kib']):.0f} MB"
    if measured["vm_hwm_kib"]:
        text += f" (VmHWM {mb(measured['vm_hwm_kib']):.0f} MB)"
    return text


# --- COPY -----------------------------------------------------------------------------------

_ESCAPES = str.maketrans({"\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r"})


def _text(value) -> str:
    """A value in COPY's text format."""
    if value is None:
        return "\\N"
    if isinstance(value, bool):
        return "t" if value else "f"
    if isinstance(value, str):
        return value.translate(_ESCAPES)
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, (dict, list)):
        return json.dumps(value).translate(_ESCAPES)
    return str(value)


def next_ids(model, n: int) -> range:
    """`n` fresh primary keys for `model` (the sequence is moved past them by copy_rows)."""
    from django.db import connection

    with connection.cursor() as cur:
        cur.execute(f"SELECT COALESCE(MAX(id), 0) FROM {model._meta.db_table}")
        start = cur.fetchone()[0] + 1
    return range(start, start + n)


def copy_rows(model, columns: Sequence[str], rows: Iterable[Sequence]) -> int:
    """COPY `rows` (values for `columns`, db column names) into `model`'s table.

    Every other concrete field gets its default (auto_now fields: now), so a
    field added to a model later does not break the bench; a field without a
    default that is not given stops it with a message.
    """
    from django.db import connection
    from django.utils import timezone

    now = timezone.now()
    rest_columns, rest_values = [], []
    for f in model._meta.concrete_fields:
        if f.column in columns or (f.primary_key and f.db_returning):
            continue  # given, or an identity column the database fills
        if getattr(f, "auto_now", False) or getattr(f, "auto_now_add", False):
            value = now
        elif f.has_default() or f.null or f.empty_strings_allowed:
            value = f.get_default()  # the default, else None or ""
        else:
            raise SystemExit(f"the bench gives no value for {model.__name__}.{f.name}")
        rest_columns.append(f.column)
        rest_values.append(value)
    tail = "".join("\t" + _text(v) for v in rest_values) + "\n"
    table = model._meta.db_table
    names = ", ".join(f'"{c}"' for c in [*columns, *rest_columns])
    n = 0
    with connection.cursor() as cur, cur.cursor.copy(f"COPY {table} ({names}) FROM STDIN") as cp:
        buffer: list[str] = []
        for row in rows:
            buffer.append("\t".join(map(_text, row)) + tail)
            if len(buffer) >= 20_000:
                cp.write("".join(buffer))
                n += len(buffer)
                buffer.clear()
        cp.write("".join(buffer))
        n += len(buffer)
    if "id" in columns:
        with connection.cursor() as cur:
            cur.execute(
                f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), "
                f"(SELECT MAX(id) FROM {table}))"
            )
    return n


# A pair's per-slot answers, as the benches give them beside a judgement's
# columns, and where each goes: (slot, JudgementSlot column).
PAIR_SLOT_COLUMNS = {
    "correct_1": (1, "correctness"),
    "correct_2": (2, "correctness"),
    "grade_1": (1, "grade"),
    "grade_2": (2, "grade"),
}


def copy_votes(columns: Sequence[str], rows: Iterable[Sequence]) -> int:
    """COPY judgements given with a pair's correct_1/correct_2/grade_1/grade_2
    among `columns`: the judgement rows, then their per-slot answers as
    JudgementSlot rows (issue 32), one per slot that has an answer."""
    from annotate.models import Judgement, JudgementSlot

    rows = list(rows)
    ids = next_ids(Judgement, len(rows))
    own = [i for i, c in enumerate(columns) if c not in PAIR_SLOT_COLUMNS]
    answers = [(i, *PAIR_SLOT_COLUMNS[c]) for i, c in enumerate(columns) if c in PAIR_SLOT_COLUMNS]
    written = copy_rows(
        Judgement,
        ["id", *(columns[i] for i in own)],
        ([pk, *(row[i] for i in own)] for pk, row in zip(ids, rows, strict=True)),
    )

    def slot_rows():
        for pk, row in zip(ids, rows, strict=True):
            by_slot: dict[int, dict[str, str]] = {}
            for i, slot, column in answers:
                if row[i]:
                    by_slot.setdefault(slot, {})[column] = row[i]
            for slot, given in sorted(by_slot.items()):
                yield (pk, slot, given.get("correctness", ""), given.get("grade", ""))

    copy_rows(JudgementSlot, ["judgement_id", "slot", "correctness", "grade"], slot_rows())
    return written


# --- The results table ---------------------------------------------------------------------


class Results:
    """The rows of the results table (metric | value | target | ok), and whether
    a target was missed."""

    def __init__(self) -> None:
        self.rows: list[tuple[str, str, str, str]] = []
        self.failed = False

    def check(self, ok: bool) -> str:
        """The ok column for a target met or not (a miss fails the bench)."""
        self.failed |= not ok
        return "yes" if ok else "NO"

    def add(self, metric: str, value: str, target: str = "", ok: bool | None = None) -> None:
        """A row; its ok column is empty when `ok` is None (no target)."""
        self.rows.append((metric, value, target, "" if ok is None else self.check(ok)))


def print_table(rows: list[tuple[str, str, str, str]], *, rstrip: bool = False) -> None:
    """Print `rows` under a metric | value | target | ok header, columns aligned;
    with `rstrip`, the rows without their trailing blanks."""
    header = ("metric", "value", "target", "ok")
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(4)]
    print(" | ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)))
    print("-|-".join("-" * w for w in widths))
    for row in rows:
        line = " | ".join(c.ljust(w) for c, w in zip(row, widths, strict=True))
        print(line.rstrip() if rstrip else line)
