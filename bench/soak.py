"""Soak: 32 annotators and 2 curators for 10 minutes against the whole stack.

    .venv/bin/python bench/soak.py [--minutes 10] [--annotators 32] [--curators 2]
                                   [--items 12000] [--think 0.5] [--max-requests 200000]
                                   [--release-every 120] [--keep]

Starts, on 127.0.0.1 ports the OS picks: gunicorn (2 sync workers, DEBUG off,
after ``collectstatic``), one Celery worker (prefork, concurrency 1) on Redis,
both on the bench's own PostgreSQL database. Then, until the deadline or the
request budget, whichever comes first:

- each annotator (a thread with a keep-alive HTTP client, the requests the
  compare page makes) judges items with an exponential think time of mean
  ``--think`` seconds, and reloads its page every 25 votes;
- each curator opens the contested queue, adjudicates a contested item
  (resolve, with a reason and the verdict version of the page it read; a 409
  because the other curator was first is counted, not an error), opens the
  agreement dashboard and asks for a background recomputation every minute;
- the first curator also cuts a release every ``--release-every`` seconds
  (issue 29: each is built by the worker while the annotators go on voting);
- at the end one curator cuts a release and waits for the worker to build it.

Every 2 s the resident memory (VmRSS) of each gunicorn worker, the Celery
worker (main process and pool child) and this load generator is sampled.
Then the database is checked: every acknowledged vote stored exactly once,
no item over its overlap, tallies and verdicts consistent with the votes
(recomputed with curation.verdicts.rule, the rule the app applies), every
acknowledged curator decision in place, every release built (started, ready,
failed; each ready one's records equal its members). Prints a table; exits 1
on a lost or duplicated vote, an inconsistent verdict, a request error, a
release build that failed or never finished, or memory that grew (end above
start, after warm-up, by more than 10 % + 16 MB).

The script owns one PostgreSQL database (DATABASE_URL, default below; its
name must start with ``bench``), dropped and created at the start, dropped
at the end unless --keep, and the Celery queue keys of one Redis database
(SOAK_REDIS_URL, default redis://127.0.0.1:6379/9), emptied at the start.
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import io
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import annotate_bench
import harness
from annotate_bench import CSRF_INPUT, Annotator, Browser, Failure, Gunicorn, percentile
from harness import ROOT, Results, bench_database, database_url, print_table, recreate_database

DEFAULT_DATABASE_URL = "postgres://postgres@127.0.0.1:5432/bench_soak"
DEFAULT_REDIS_URL = "redis://127.0.0.1:6379/9"
SAMPLE_SECONDS = 2.0
# Memory is "flat" when the end RSS is within this of the RSS after warm-up.
GROWTH_FRACTION = 0.10
GROWTH_KIB = 16 * 1024
ERRORS = (Failure, OSError, http.client.HTTPException, ValueError, KeyError)


# --- Setup, in a child with Django ------------------------------------------------------------


def child_setup(params: dict) -> None:
    """annotate_bench's project, items and annotators, plus curators; prints JSON."""
    with contextlib.redirect_stdout(io.StringIO()) as out:
        annotate_bench.child_setup(params)
    setup = json.loads(out.getvalue().strip().splitlines()[-1])
    from django.contrib.auth import get_user_model
    from django.contrib.auth.hashers import make_password

    from annotate.models import Membership, Project

    project = Project.objects.get(slug=setup["slug"])
    curators = get_user_model().objects.bulk_create(
        [
            get_user_model()(username=f"curator{n:02d}", password=make_password(PASSWORD))
            for n in range(params["curators"])
        ]
    )
    Membership.objects.bulk_create(
        [
            Membership(project=project, user=u, role="curator", pseudonym=f"C{n:02d}")
            for n, u in enumerate(curators)
        ]
    )
    setup["curators"] = [u.username for u in curators]
    print(json.dumps(setup))


PASSWORD = annotate_bench.PASSWORD


# --- Processes and their memory ---------------------------------------------------------------


class CeleryWorker:
    """One worker, prefork with one child, in its own process group."""

    def __init__(self, env: dict[str, str], log: Path):
        self.log = log
        with log.open("wb") as fh:
            self.proc = subprocess.Popen(
                [
                    *(str(Path(sys.executable).parent / "celery"), "-A", "config", "worker"),
                    *("--pool", "prefork", "--concurrency", "1", "--loglevel", "WARNING"),
                    *("--hostname", "soak@%h", "--without-gossip", "--without-mingle"),
                ],
                cwd=ROOT,
                env=env,
                stdout=fh,
                stderr=fh,
                start_new_session=True,
            )

    def pids(self) -> list[int]:
        return [self.proc.pid, *children(self.proc.pid)]

    def stop(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=10)


def children(pid: int) -> list[int]:
    try:
        return [int(p) for p in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


def rss_kib(pid: int) -> int | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        pass
    return None


class MemorySampler(threading.Thread):
    """VmRSS of labelled processes every SAMPLE_SECONDS: {label: [(t, kib)]}."""

    def __init__(self, processes):
        super().__init__(daemon=True)
        self.processes = processes  # a callable returning {label: pid}
        self.samples: dict[str, list[tuple[float, int]]] = defaultdict(list)
        self.stopping = threading.Event()

    def sample(self) -> None:
        now = time.monotonic()
        for label, pid in self.processes().items():
            kib = rss_kib(pid)
            if kib is not None:
                self.samples[label].append((now, kib))

    def run(self) -> None:
        self.sample()
        while not self.stopping.wait(SAMPLE_SECONDS):
            self.sample()

    def stop(self) -> None:
        self.stopping.set()
        self.join(timeout=5)
        self.sample()


# --- Load ---------------------------------------------------------------------------------------


@dataclass
class Load:
    deadline: float
    max_requests: int
    lock: threading.Lock = field(default_factory=threading.Lock)
    requests: Counter = field(default_factory=Counter)
    latencies: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    errors: list[str] = field(default_factory=list)
    conflicts: int = 0
    judgements: list[float] = field(default_factory=list)  # monotonic time of each ack

    def go_on(self) -> bool:
        return time.monotonic() < self.deadline and sum(self.requests.values()) < self.max_requests

    def record(self, kind: str, seconds: float) -> None:
        with self.lock:
            self.requests[kind] += 1
            self.latencies[kind].append(seconds)

    def error(self, who: str, exc: Exception) -> None:
        with self.lock:
            self.errors.append(f"{who}: {type(exc).__name__}: {exc}"[:300])


def pause(rng: random.Random, mean: float, load: Load) -> None:
    """Think time: exponential with the given mean, at most 5 means, not past the deadline."""
    if mean > 0:
        time.sleep(
            max(0.0, min(rng.expovariate(1 / mean), 5 * mean, load.deadline - time.monotonic()))
        )


RELOAD = "page: POST /p/<slug>/work/ + GET /a/<id>/"


def annotate_loop(a: Annotator, load: Load, think: float) -> None:
    votes = 0
    failures = 0
    while not a.done and load.go_on():
        try:
            resp = a.judge()
            load.record("vote: POST /a/<id>/submit/ (+ next item)", resp.seconds)
            with load.lock:
                load.judgements.append(time.monotonic())
            votes += 1
            if votes % 25 == 0 and not a.done:
                start = time.perf_counter()
                a.start()  # a page reload: the open item again
                load.record(
                    "page: POST /p/<slug>/work/ + GET /a/<id>/", time.perf_counter() - start
                )
        except ERRORS as exc:
            load.error(a.username, exc)
            failures += 1
            if failures > 20:
                return
            with contextlib.suppress(*ERRORS):
                a.start()
        pause(a.rng, think, load)


VERSION_INPUT = re.compile(r'name="version" value="(\d+)"')


@dataclass
class Curator:
    browser: Browser
    username: str
    slug: str
    rng: random.Random
    # item → (monotonic time of the acknowledgement, choice)
    decided: dict[int, tuple[float, str]] = field(default_factory=dict)
    last_refresh: float = 0.0
    # Cutting releases during the run (the first curator): every this many s.
    release_every: float = 0.0
    last_release: float = field(default_factory=time.monotonic)
    releases_cut: list[str] = field(default_factory=list)

    def get(self, load: Load, kind: str, path: str) -> str:
        resp = self.browser.request("GET", path)
        load.record(kind, resp.seconds)
        if resp.status != 200:
            raise Failure(f"{path}: {resp.status}")
        return resp.text()

    def post(self, load: Load, kind: str, path: str, form, referer: str):
        resp = self.browser.request(
            "POST", path, form=form, headers={"Referer": self.browser.origin + referer}
        )
        load.record(kind, resp.seconds)
        return resp

    def login(self) -> None:
        self.browser.sign_in(self.username, PASSWORD, f"/p/{self.slug}/curation/")

    def round(self, load: Load) -> None:
        queue_path = f"/p/{self.slug}/curation/"
        html = self.get(load, "curator: GET contested queue", queue_path)
        ids = sorted({int(i) for i in re.findall(rf"/p/{self.slug}/curation/(\d+)/", html)})
        if ids:
            item_id = self.rng.choice(ids)
            path = f"/p/{self.slug}/curation/{item_id}/"
            page = self.get(load, "curator: GET adjudication page", path)
            token, version = CSRF_INPUT.search(page), VERSION_INPUT.search(page)
            if token is None or version is None:
                raise Failure(f"{path}: no decision form")
            choice = self.rng.choice("12")
            resp = self.post(
                load,
                "curator: POST decide (resolve)",
                f"{path}decide/",
                {
                    "csrfmiddlewaretoken": token.group(1),
                    "action": "resolve",
                    "choice": choice,
                    "reason": f"soak: {self.username} read both responses",
                    "version": version.group(1),
                },
                path,
            )
            if resp.status == 409:  # the other curator decided it first
                with load.lock:
                    load.conflicts += 1
            elif resp.status in (302, 303):
                self.decided[item_id] = (time.monotonic(), choice)
            else:
                raise Failure(f"decide {item_id}: {resp.status} {resp.body[:200]!r}")
        page = self.get(load, "curator: GET agreement dashboard", f"/p/{self.slug}/agreement/")
        if time.monotonic() - self.last_refresh > 60:
            self.last_refresh = time.monotonic()
            token = CSRF_INPUT.search(page)
            if token is None:
                raise Failure("the agreement dashboard has no refresh form")
            resp = self.post(
                load,
                "curator: POST agreement refresh",
                f"/p/{self.slug}/agreement/refresh/",
                {"csrfmiddlewaretoken": token.group(1)},
                f"/p/{self.slug}/agreement/",
            )
            if resp.status not in (302, 303):
                raise Failure(f"agreement refresh: {resp.status}")
        if self.release_every and time.monotonic() - self.last_release > self.release_every:
            self.last_release = time.monotonic()
            version = f"soak-during-{len(self.releases_cut) + 1}"
            if self.cut_release(load, version=version) is not None:
                self.releases_cut.append(version)

    def cut_release(self, load: Load, *, version: str = "soak-1") -> str | None:
        """Cut a release; None when nothing is agreed yet (the form says so)."""
        path = f"/p/{self.slug}/releases/new/"
        page = self.get(load, "curator: GET new release", path)
        token = CSRF_INPUT.search(page)
        domains = sorted(set(re.findall(r'name="domains" value="([^"]+)"', page)))
        if token is None or not domains:
            raise Failure("the new release page has no form")
        resp = self.post(
            load,
            "curator: POST new release",
            path,
            [  # pairs: the domains field repeats
                ("csrfmiddlewaretoken", token.group(1)),
                ("version", version),
                ("notes", "cut by the soak"),
                *(("domains", d) for d in domains),
                ("seed", "1"),
            ],
            path,
        )
        if resp.status == 400 and "Nothing to release" in resp.text():
            return None
        if resp.status not in (302, 303):
            problems = re.findall(r'class="errorlist[^"]*"[^>]*>(.*?)</ul>', resp.text(), re.S)
            raise Failure(f"new release: {resp.status} {problems or resp.text()[:300]}")
        return resp.headers["location"]


def curate_loop(c: Curator, load: Load, think: float) -> None:
    failures = 0
    while load.go_on():
        try:
            c.round(load)
        except ERRORS as exc:
            load.error(c.username, exc)
            failures += 1
            if failures > 20:
                return
        pause(c.rng, think, load)


# --- Database checks --------------------------------------------------------------------------


def check_database(url: str, acknowledged: dict[int, str], decided: dict[int, str]) -> dict:
    """annotate_bench's invariants, plus verdicts recomputed from the votes with
    the app's own rule (curation.verdicts.rule, a pure module) and the curators'
    acknowledged decisions."""
    import psycopg

    from curation.verdicts.rule import RuleVote, Thresholds, decide

    counts = annotate_bench.check_database(url, acknowledged)
    with psycopg.connect(url) as conn:
        (votes_per_item, agree_share, escalation_votes) = conn.execute(
            "SELECT votes_per_item, agree_share, escalation_votes FROM annotate_project"
        ).fetchone()
        thresholds = Thresholds(
            votes_per_item=votes_per_item,
            agree_share=agree_share,
            escalation_votes=escalation_votes,
        )
        votes: dict[int, list[RuleVote]] = defaultdict(list)
        for item_id, choice, c1, c2, flagged in conn.execute(
            """SELECT a.item_id, j.choice, COALESCE(s1.correctness, ''),
                      COALESCE(s2.correctness, ''), j.flagged_problem
               FROM annotate_judgement j JOIN annotate_assignment a ON a.id = j.assignment_id
               LEFT JOIN annotate_judgementslot s1 ON s1.judgement_id = j.id AND s1.slot = 1
               LEFT JOIN annotate_judgementslot s2 ON s2.judgement_id = j.id AND s2.slot = 2
               WHERE j.is_current"""
        ):
            votes[item_id].append(RuleVote(choice, c1, c2, flagged))
        wrong = wrong_needed = 0
        rows = conn.execute(
            """SELECT i.id, i.votes_needed, i.gold_choice, v.status, v.final_choice,
                      v.escalations, v.escalated_by
               FROM annotate_item i JOIN curation_verdict v ON v.item_id = i.id"""
        ).fetchall()
        # Eligible annotators per item (annotate.eligibility): active members
        # with the annotator role never assigned the item.
        eligible = dict(
            conn.execute(
                """SELECT i.id, (SELECT count(*) FROM annotate_membership m
                                 JOIN auth_user u ON u.id = m.user_id
                                 WHERE m.project_id = i.project_id AND m.role = 'annotator'
                                   AND u.is_active AND m.is_active AND NOT EXISTS (
                                       SELECT 1 FROM annotate_assignment a
                                       WHERE a.item_id = i.id AND a.annotator_id = m.user_id))
                   FROM annotate_item i"""
            ).fetchall()
        )
        curator_decided = {}
        for item_id, needed, gold, status, final, escalations, escalated_by in rows:
            if status in ("resolved", "excluded"):
                # A decision lowers votes_needed to the votes the item has.
                curator_decided[item_id] = final
                continue
            if needed != votes_per_item + escalated_by:
                wrong_needed += 1
            outcome = decide(
                votes[item_id],
                votes_needed=needed,
                escalations=escalations,
                thresholds=thresholds,
                gold=gold or "",
                eligible=eligible[item_id],
            )
            if (outcome.status, outcome.final_choice, outcome.escalate_by) != (status, final, 0):
                wrong += 1
        audited = {
            item_id
            for (item_id,) in conn.execute(
                "SELECT item_id FROM curation_auditevent WHERE action = 'resolve'"
            )
        }
    counts["verdicts that differ from the rule applied to their votes"] = wrong
    counts["open items whose votes_needed is not base + escalation granted"] = wrong_needed
    counts["acknowledged curator decisions not in place"] = sum(
        1 for item, choice in decided.items() if curator_decided.get(item) != choice
    )
    counts["resolved items without an audit event"] = sum(
        1 for item in curator_decided if item not in audited
    )
    return counts


# --- Report -----------------------------------------------------------------------------------


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.0f} ms"


def mb(kib: float) -> str:
    return f"{kib / 1024:.0f} MB"


def memory_rows(t: Results, samples: dict, warm: float, until: float) -> None:
    """Start (first sample after warm-up), end and peak of the load phase; the
    release build after it (pyarrow, the files) is shown apart."""
    for label in sorted(samples):
        series = samples[label]
        during = [(at, kib) for at, kib in series if at <= until] or series[:1]
        after = [kib for at, kib in during if at >= warm] or [during[-1][1]]
        start, end, peak = after[0], during[-1][1], max(kib for _, kib in during)
        allowed = start * GROWTH_FRACTION + GROWTH_KIB
        value = f"{mb(start)} / {mb(end)} / {mb(peak)}"
        if series[-1][0] > until:
            value += f" (after the release: {mb(series[-1][1])})"
        t.add(
            f"RSS {label}: start (after warm-up) / end / peak",
            value,
            f"end ≤ start + {GROWTH_FRACTION:.0%} + {GROWTH_KIB // 1024} MB",
            end - start <= allowed,
        )


def report(
    *,
    load: Load,
    seconds: float,
    samples,
    warm: float,
    until: float,
    problems,
    release,
    during,
    args,
) -> Results:
    t = Results()
    t.add("duration", f"{seconds:.0f} s", f"{args.minutes:g} min or {args.max_requests} requests")
    t.add("annotators / curators", f"{args.annotators} / {args.curators}")
    total = sum(load.requests.values())
    t.add("requests", f"{total}")
    for kind in sorted(load.requests):
        values = load.latencies[kind]
        t.add(
            f"  {kind}: n, p50 / p95 / p99",
            f"{len(values)}, {ms(percentile(values, 0.5))} / {ms(percentile(values, 0.95))}"
            f" / {ms(percentile(values, 0.99))}",
        )
    every = [v for values in load.latencies.values() for v in values]
    t.add(
        "all requests: p50 / p95 / p99",
        f"{ms(percentile(every, 0.5))} / {ms(percentile(every, 0.95))} / "
        f"{ms(percentile(every, 0.99))}",
    )
    t.add("judgements acknowledged", f"{len(load.judgements)}")
    t.add("judgements/s", f"{len(load.judgements) / seconds:.1f}")
    t.add("curator decisions refused as stale (409, expected race)", f"{load.conflicts}")
    t.add("request errors", f"{len(load.errors)}", "0", not load.errors)
    for problem, n in problems.items():
        t.add(problem, str(n), "0", n == 0)
    if during is not None:
        t.add(
            "releases cut during the run: started / ready / failed",
            f"{during['started']} / {during['ready']} / {during['failed']}",
            "all ready, ≥ 1",
            during["started"] >= 1 and during["ready"] == during["started"],
        )
        t.add(
            "  ready releases whose records ≠ members",
            str(during["mismatched"]),
            "0",
            during["mismatched"] == 0,
        )
    if release is not None:
        t.add(
            "release cut at the end",
            f"{release['status']}, {release['items']} items, built in {release['seconds']:.1f} s",
            "ready",
            release["status"] == "ready",
        )
    memory_rows(t, samples, warm, until)
    return t


def release_state(url: str) -> dict:
    import psycopg

    with psycopg.connect(url) as conn:
        row = conn.execute(
            "SELECT status, progress_total, error FROM curation_release WHERE version = 'soak-1'"
        ).fetchone()
    return {"status": row[0], "items": row[1], "error": row[2]} if row else {"status": "missing"}


def releases_during(url: str, versions: list[str], *, wait: float = 300) -> dict:
    """The outcome of the releases cut during the run, once none is still
    pending or building (or after `wait` seconds: those count as not ready)."""
    import psycopg

    deadline = time.monotonic() + wait
    while True:
        with psycopg.connect(url) as conn:
            rows = conn.execute(
                "SELECT r.version, r.status, r.error, r.progress_total,"
                " (SELECT count(*) FROM curation_releaseitem i WHERE i.release_id = r.id)"
                " FROM curation_release r WHERE r.version = ANY(%s)",
                [versions],
            ).fetchall()
        statuses = Counter(row[1] for row in rows)
        if not (statuses["pending"] or statuses["building"]) or time.monotonic() > deadline:
            break
        time.sleep(1)
    return {
        "started": len(versions),
        "ready": statuses["ready"],
        "failed": statuses["failed"],
        "mismatched": sum(1 for row in rows if row[1] == "ready" and row[3] != row[4]),
        "errors": [f"{row[0]}: {row[2]}" for row in rows if row[1] == "failed"],
    }


def empty_queue(redis_url: str) -> None:
    """Messages of an earlier run (for a database that no longer exists) go."""
    import redis

    client = redis.Redis.from_url(redis_url)
    client.delete("celery", "unacked", "unacked_index", "unacked_mutex")
    client.close()


# --- Main -------------------------------------------------------------------------------------


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=10.0, help="duration (10)")
    parser.add_argument("--annotators", type=int, default=32, help="annotators (32)")
    parser.add_argument("--curators", type=int, default=2, help="curators (2)")
    parser.add_argument("--items", type=int, default=12000, help="items in the project (12000)")
    parser.add_argument("--think", type=float, default=0.5, help="annotator think time, s (0.5)")
    parser.add_argument(
        "--curator-think", type=float, default=2.0, help="curator think time, s (2)"
    )
    parser.add_argument(
        "--max-requests", type=int, default=200_000, help="stop after this many (200000)"
    )
    parser.add_argument("--no-release", action="store_true", help="do not cut a release at the end")
    parser.add_argument(
        "--release-every",
        type=float,
        default=120.0,
        help="the first curator cuts a release every this many seconds during the run "
        "(120; 0: none)",
    )
    parser.add_argument("--keep", action="store_true", help="keep the temp folder and database")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        import django

        django.setup()
        child_setup(json.loads(args.child))
        return 0
    if not 0.1 <= args.minutes <= 120 or args.annotators < 1 or args.items < 10:
        parser.error("--minutes is 0.1-120, --annotators at least 1, --items at least 10")

    url = database_url(DEFAULT_DATABASE_URL)
    name, _ = bench_database(url)
    redis_url = os.environ.get("SOAK_REDIS_URL", DEFAULT_REDIS_URL)
    tmp = Path(tempfile.mkdtemp(prefix="soak-"))
    env = annotate_bench.child_env(url, tmp)
    env["REDIS_URL"] = redis_url
    sys.path.insert(0, str(ROOT))  # curation.verdicts.rule, for the verdict check
    server = worker = sampler = None
    failed = False
    try:
        print(f"creating database {name} and {args.items} items ...", file=sys.stderr)
        recreate_database(url)
        empty_queue(redis_url)
        params = {"items": args.items, "annotators": args.annotators - 1, "curators": args.curators}
        setup = harness.run_child(
            __file__, ["--child", json.dumps(params)], env, failure="the setup failed"
        )
        worker = CeleryWorker(env, tmp / "celery.log")
        server = Gunicorn(env, tmp / "gunicorn.log", workers=2, worker_class="sync", threads=1)
        slug = setup["slug"]

        def processes() -> dict[str, int]:
            labels = {"load generator": os.getpid(), "gunicorn master": server.proc.pid}
            for n, pid in enumerate(sorted(server.worker_pids()), 1):
                labels[f"gunicorn worker {n}"] = pid
            labels["celery worker (main)"] = worker.proc.pid
            for n, pid in enumerate(sorted(children(worker.proc.pid)), 1):
                labels[f"celery pool child {n}"] = pid
            return labels

        annotators = [
            Annotator(Browser(server.port), u, slug, random.Random(u)) for u in setup["users"]
        ]
        curators = [
            Curator(Browser(server.port), u, slug, random.Random(u)) for u in setup["curators"]
        ]
        if curators:
            curators[0].release_every = args.release_every
        print(
            f"logging in {len(annotators)} annotators, {len(curators)} curators ...",
            file=sys.stderr,
        )
        for a in annotators:
            a.login()
            a.start()
        for c in curators:
            c.login()

        seconds = args.minutes * 60
        sampler = MemorySampler(processes)
        sampler.start()
        started = time.monotonic()
        load = Load(deadline=started + seconds, max_requests=args.max_requests)
        warm = started + min(60.0, seconds / 5)
        threads = [
            threading.Thread(target=annotate_loop, args=(a, load, args.think), daemon=True)
            for a in annotators
        ] + [
            threading.Thread(target=curate_loop, args=(c, load, args.curator_think), daemon=True)
            for c in curators
        ]
        print(f"running for {args.minutes:g} min on port {server.port} ...", file=sys.stderr)
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=seconds + 120)
        elapsed = time.monotonic() - started
        sampler.sample()
        load_end = time.monotonic()

        during = None
        if args.release_every and curators:
            print("waiting for the releases cut during the run ...", file=sys.stderr)
            during = releases_during(url, curators[0].releases_cut)
            for error in during["errors"]:
                load.error("release build", Failure(error))
        release = None
        if not args.no_release and curators:
            print("cutting a release ...", file=sys.stderr)
            begin = time.monotonic()
            try:
                curators[0].cut_release(load)
                while time.monotonic() - begin < 300:
                    release = release_state(url)
                    if release["status"] in ("ready", "failed"):
                        break
                    time.sleep(0.5)
            except ERRORS as exc:
                load.error(curators[0].username, exc)
                release = {"status": "not created", "items": 0}
            release = {**(release or {}), "seconds": time.monotonic() - begin}
        sampler.stop()
        for person in [*annotators, *curators]:
            person.browser.close()
        server.stop()
        server = None
        worker.stop()
        worker = None

        acknowledged: dict[int, str] = {}
        for a in annotators:
            acknowledged.update(a.acknowledged)
        # Both curators may decide one item in turn (the second having read the
        # first decision, as the version check demands): the later one holds.
        latest: dict[int, tuple[float, str]] = {}
        for c in curators:
            for item_id, (at, choice) in c.decided.items():
                if item_id not in latest or at > latest[item_id][0]:
                    latest[item_id] = (at, choice)
        decided = {item_id: choice for item_id, (_, choice) in latest.items()}
        print("checking the database ...", file=sys.stderr)
        problems = check_database(url, acknowledged, decided)
        table = report(
            load=load,
            seconds=elapsed,
            samples=sampler.samples,
            warm=warm,
            until=load_end,
            problems=problems,
            release=release,
            during=during,
            args=args,
        )
        print_table(table.rows)
        for error in load.errors[:20]:
            print("error:", error, file=sys.stderr)
        failed = table.failed
    finally:
        if sampler is not None:
            sampler.stopping.set()
        if server is not None:
            server.stop()
        if worker is not None:
            worker.stop()
        if args.keep:
            print(f"kept {tmp} and database {name}", file=sys.stderr)
        else:
            shutil.rmtree(tmp, ignore_errors=True)
            recreate_database(url, create=False)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
