"""Compare-page bench (issue 19): real Chromium, keyboard only, N judgements.

For each judgement it times *keypress → next item painted with its image
decoded*: from the Enter keydown (performance.now() in a capturing
listener) to the frame after the next item went in (work.js's `work:shown`
event: the item kept ready, or htmx's swap of the server's answer), its
image's decode() resolved and a requestAnimationFrame callback ran (a message posted
from it arrives once that frame is painted). It also reads, per judgement,
the server's share: time to first byte of the submit request from the
browser's Resource Timing, and on gunicorn the request time its access log
records (%(M)s).

The bench pauses ``--think-ms`` (500) before each item, as an annotator
reads for seconds: what is timed is one keypress, not a queue of votes.
The table says how many next items came from the one kept ready.

Two servers, one annotator, the same data (N + 20 items, one vote each,
half correctness items, 1024x768 JPEG images):

* ``embedded``: the embedded default as ``make run`` runs it (SQLite in a
  fresh DATA_DIR, gunicorn with one worker x 8 threads, DEBUG off), port 8190;
* ``gunicorn``: gunicorn (2 gthread workers x 4 threads, DEBUG off) on
  PostgreSQL, port 8191. The database named by ``--database-url`` (or
  DATABASE_URL) is FLUSHED first: pass your own (its name must start with
  ``wt`` or ``bench``).

    .venv/bin/python bench/compare_bench.py --judgements 200 \\
        --database-url postgres://postgres@127.0.0.1:5432/wt19

``--pictures`` (issue 24): the items are MMRB2-shaped pairs whose two
responses are 1024x1024 JPEGs (about 185 kB each), every other one an edit
with a 1024x1024 input image beside them; the next item is painted when all
its pictures are decoded. Target: p95 <= 100 ms.

``--ranking4`` (issue 33): a ranking project whose items have four text
responses (about 120 words each); each judgement ranks the four by keys
(4, 3, 2, 1: the last shown first) and presses Enter. Target: p95 <= 50 ms.
With ``--pictures`` too, each response is one 1024x1024 JPEG (about 185 kB)
instead of text: the next item is painted when its four pictures are
decoded. Target: p95 <= 100 ms.

Chromium: CHROMIUM_PATH or /usr/bin/chromium. Prints one table row per
server: p50/p95/max of paint latency, and p50/p95 of server time.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parent.parent
PY = sys.executable

# Runs in the page before its scripts: the timing hooks.
TIMING_JS = """
window.__lat = [];
window.__ready = [];
window.__split = [];
document.addEventListener("keydown", function (e) {
  if (e.key === "Enter") window.__t0 = performance.now();
}, true);
document.addEventListener("work:shown", function (e) {
  var t0 = window.__t0;
  if (t0 == null) return;
  window.__t0 = null;
  window.__ready.push(e.detail.ready);
  var shownAt = performance.now() - t0, decodedAt = null;
  // Every picture of the new item: the prompt's (MRB) or each part's (--pictures).
  var imgs = e.detail.work.querySelectorAll("#viewer-img, img.part-img");
  var waits = Array.prototype.map.call(imgs, function (img) {
    return img.decode ? img.decode().catch(function () {}) : Promise.resolve();
  });
  // --clips: each video's poster painted and every player ready to play.
  Array.prototype.forEach.call(e.detail.work.querySelectorAll("video.clip[poster]"), function (v) {
    var poster = new Image();
    poster.src = v.getAttribute("poster");
    waits.push(poster.decode().catch(function () {}));
  });
  Array.prototype.forEach.call(e.detail.work.querySelectorAll(".responses .clip"), function (m) {
    waits.push(m.readyState >= 3 ? Promise.resolve() : new Promise(function (done) {
      m.addEventListener("canplay", done, { once: true });
    }));
  });
  var decoded = Promise.all(waits);
  decoded.then(function () {
    decodedAt = performance.now() - t0;
    requestAnimationFrame(function () {
      var ch = new MessageChannel();
      ch.port1.onmessage = function () {
        window.__lat.push(performance.now() - t0);
        window.__split.push([shownAt, decodedAt]);
      };
      ch.port2.postMessage(0);
    });
  });
});
"""

SEED = r"""
import io, json, random, sys
from pathlib import Path
import django
django.setup()
from django.contrib.auth import get_user_model
from PIL import Image
from annotate.models import Item, Membership, Project
from annotate.importing.service import import_items_from_paths, make_thumbnails
from annotate.models.parts import render_parts_html

n, folder = int(sys.argv[1]), Path(sys.argv[2])
project = Project.objects.create(slug="compare-bench", name="Compare bench", votes_per_item=1)
project.create_default_domains()
rng = random.Random(19)
(folder / "img").mkdir(parents=True, exist_ok=True)
records = []
for i in range(n):
    img = Image.effect_noise((1024, 768), 40 + i % 50).convert("RGB")
    name = f"img/{i}.jpg"
    img.save(folder / name, "JPEG", quality=85)
    vocabulary = ["the", "image", "shows", "a", "red", "car", "tree", "sky"]
    words = " ".join(rng.choice(vocabulary) for _ in range(120))
    records.append({
        "ID": f"bench_{i}", "Text": f"**Q{i}:** what is shown? $x^2$", "Image": name,
        "Output1": f"Answer one {i}. {words}\n\n```python\nprint({i})\n```",
        "Output2": f"Answer two {i}. {words}\n\n- a\n- b",
        "Better": "Output1",
        "Category": "vqa" if i % 2 else "open_generation/preference_task",
    })
(folder / "data.json").write_text(json.dumps(records))
import_items_from_paths(project=project, dataset=folder / "data.json", images=folder)
items = list(Item.objects.filter(project=project).values_list("pk", "image_id"))
render_parts_html(item_ids=[pk for pk, _ in items])
make_thumbnails(image_ids=sorted({image for _, image in items}))
user = get_user_model().objects.create_user("bencher", password="bench-pass-19")
Membership.objects.create(project=project, user=user, role="annotator")
print("seeded", len(items))
"""


# --pictures: MMRB2-shaped pairs whose two responses are 1024x1024 JPEGs of
# about 185 kB (noise, blurred, with a shape), through the MMRB2 importer;
# every other item an edit (a 1024x1024 input image beside both results).
SEED_PICTURES = r"""
import json, sys
from pathlib import Path
import django
django.setup()
from django.contrib.auth import get_user_model
from PIL import Image, ImageDraw, ImageFilter
from annotate.importing.formats.mmrb2 import import_mmrb2_from_paths
from annotate.models import Item, Membership, Project

n, folder = int(sys.argv[1]), Path(sys.argv[2])
project = Project.objects.create(slug="compare-bench", name="Compare bench", votes_per_item=1)
project.create_default_domains()
for sub in ("images", "input_images"):
    (folder / sub).mkdir(parents=True, exist_ok=True)

def picture(path, k):
    img = Image.merge("RGB", [Image.effect_noise((1024, 1024), 50 + c * 5) for c in range(3)])
    img = img.filter(ImageFilter.GaussianBlur(1.2))
    ImageDraw.Draw(img).ellipse([150 + k % 300, 200, 700, 650 + k % 200], fill=(200, 60, 40))
    img.save(folder / path, "JPEG", quality=85)
    return ["image", path]

tasks = {"t2i": [], "edit": []}
for i in range(n):
    task = "edit" if i % 2 else "t2i"
    pid = f"bench_{i}"
    prompt = [["text", f"A red circle on a textured ground, picture {i}"]]
    if task == "edit":
        prompt = [picture(f"input_images/{pid}.jpg", i), ["text", f"Make the circle larger {i}"]]
    tasks[task].append({
        "id": pid,
        "response_a": {"model_name": "m1",
                       "response_content": [picture(f"images/{pid}_0.jpg", i)]},
        "response_b": {"model_name": "m2",
                       "response_content": [picture(f"images/{pid}_1.jpg", i + 7)]},
        "chosen": "A",
        "human_annotations": [5, 4, 6],
        "prompt_source": "bench",
        "prompt_metadata": {},
        "prompt_content": prompt,
    })
for task, pairs in tasks.items():
    (folder / f"{task}.json").write_text(json.dumps({"pairs": pairs}, indent=2))
    import_mmrb2_from_paths(project=project, dataset=folder / f"{task}.json")
user = get_user_model().objects.create_user("bencher", password="bench-pass-19")
Membership.objects.create(project=project, user=user, role="annotator")
print("seeded", Item.objects.filter(project=project).count())
"""


# --ranking4: a ranking project, four text responses per item.
SEED_RANKING = r"""
import random, sys
from pathlib import Path
import django
django.setup()
from django.contrib.auth import get_user_model
from annotate.models import Item, Membership, Project, text_part, write_item_content
from annotate.models.parts import render_parts_html

n = int(sys.argv[1])
project = Project.objects.create(
    slug="compare-bench", name="Compare bench", votes_per_item=1, task="ranking"
)
project.create_default_domains()
domain = project.domains.get(slug="general_preference")
rng = random.Random(33)
vocabulary = ["the", "answer", "is", "a", "proof", "since", "area", "twelve"]
for i in range(n):
    item = Item.objects.create(
        project=project, domain=domain, external_id=f"rank_{i}", content_hash=f"{i:064x}",
        votes_needed=1,
    )
    responses = [
        [text_part(f"Answer {k} of {i}. " + " ".join(rng.choice(vocabulary) for _ in range(120)))]
        for k in range(1, 5)
    ]
    write_item_content(item, [text_part(f"**Q{i}:** which answer is best? $x^2$")], responses)
render_parts_html(item_ids=list(Item.objects.filter(project=project).values_list("pk", flat=True)))
user = get_user_model().objects.create_user("bencher", password="bench-pass-19")
Membership.objects.create(project=project, user=user, role="annotator")
print("seeded", n)
"""


# --ranking4 --pictures: the same ranking project, each response one
# 1024x1024 JPEG (as --pictures draws them), stored content-addressed.
SEED_RANKING_PICTURES = r"""
import hashlib, io, sys
import django
django.setup()
from django.contrib.auth import get_user_model
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from PIL import Image, ImageDraw, ImageFilter
from annotate.models import (
    ImageAsset, Item, Membership, Project, image_part, text_part, write_item_content,
)
from annotate.models.parts import render_parts_html

n = int(sys.argv[1])
project = Project.objects.create(
    slug="compare-bench", name="Compare bench", votes_per_item=1, task="ranking"
)
project.create_default_domains()
domain = project.domains.get(slug="general_preference")

def picture(k):
    img = Image.merge("RGB", [Image.effect_noise((1024, 1024), 50 + c * 5) for c in range(3)])
    img = img.filter(ImageFilter.GaussianBlur(1.2))
    ImageDraw.Draw(img).ellipse([150 + k % 300, 200, 700, 650 + k % 200], fill=(200, 60, 40))
    out = io.BytesIO()
    img.save(out, "JPEG", quality=85)
    data = out.getvalue()
    sha = hashlib.sha256(data).hexdigest()
    name = default_storage.save(f"images/{sha[:2]}/{sha}.jpg", ContentFile(data))
    asset = ImageAsset.objects.create(
        sha256=sha, file=name, format="JPEG", width=1024, height=1024, size_bytes=len(data)
    )
    return image_part(asset.pk)

for i in range(n):
    item = Item.objects.create(
        project=project, domain=domain, external_id=f"rank_{i}", content_hash=f"{i:064x}",
        votes_needed=1,
    )
    responses = [[picture(4 * i + k)] for k in range(4)]
    write_item_content(item, [text_part(f"**Q{i}:** which picture is best?")], responses)
render_parts_html(item_ids=list(Item.objects.filter(project=project).values_list("pk", flat=True)))
user = get_user_model().objects.create_user("bencher", password="bench-pass-19")
Membership.objects.create(project=project, user=user, role="annotator")
print("seeded", n)
"""


# --clips (issue 35): pairs of two 720p 10-second H.264 clips (25 fps), each
# file its own (two encodings remuxed with a comment per file), stored
# content-addressed with their posters and strips, as an import leaves them.
SEED_CLIPS = r"""
import hashlib, io, sys
import av
import django
django.setup()
from django.contrib.auth import get_user_model
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from annotate.importing.media import derive
from annotate.models import (
    Item, MediaAsset, Membership, Project, media_part, text_part, write_item_content,
)
from annotate.models.parts import render_parts_html
from demo.clips import video_bytes

n = int(sys.argv[1])
project = Project.objects.create(slug="compare-bench", name="Compare bench", votes_per_item=1)
project.create_default_domains()
domain = project.domains.get(slug="general_preference")
bases = [video_bytes(seconds=10, width=1280, height=720, fps=25),
         video_bytes(seconds=10, width=1280, height=720, fps=25, wrong_colour=True)]

def clip(base, comment):
    out = io.BytesIO()
    with av.open(io.BytesIO(base)) as src, av.open(out, "w", format="mp4") as dst:
        dst.metadata["comment"] = comment
        stream = dst.add_stream_from_template(src.streams.video[0])
        for packet in src.demux(src.streams.video[0]):
            if packet.dts is not None:
                packet.stream = stream
                dst.mux(packet)
    data = out.getvalue()
    sha = hashlib.sha256(data).hexdigest()
    name = default_storage.save(f"media/{sha[:2]}/{sha}.mp4", ContentFile(data))
    asset = MediaAsset.objects.create(
        sha256=sha, kind="video", file=name, container="mp4", content_type="video/mp4",
        video_codec="h264", duration_ms=10000, width=1280, height=720, fps=25.0,
        size_bytes=len(data),
    )
    derive(asset)
    return media_part(asset)

for i in range(n):
    item = Item.objects.create(
        project=project, domain=domain, external_id=f"clip_{i}", content_hash=f"{i:064x}",
        votes_needed=1,
    )
    responses = [[clip(base, f"{i} {k}")] for k, base in enumerate(bases)]
    write_item_content(item, [text_part(f"Which clip keeps its colour? ({i})")], responses)
render_parts_html(item_ids=list(Item.objects.filter(project=project).values_list("pk", flat=True)))
user = get_user_model().objects.create_user("bencher", password="bench-pass-19")
Membership.objects.create(project=project, user=user, role="annotator")
print("seeded", n)
"""


def run(cmd, env, **kw):
    subprocess.run(cmd, env=env, cwd=ROOT, check=True, **kw)


def wait_up(url: str, proc: subprocess.Popen, log: Path) -> None:
    for _ in range(300):
        if proc.poll() is not None:
            raise SystemExit(f"server exited:\n{log.read_text()[-3000:]}")
        try:
            urllib.request.urlopen(url + "/accounts/login/", timeout=2)
            return
        except OSError:
            time.sleep(0.2)
    raise SystemExit(f"server did not answer:\n{log.read_text()[-3000:]}")


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


def drive(base: str, judgements: int, think_ms: int) -> tuple:
    """(paint latencies, server times to first byte) in ms, how many next
    items were shown from the one kept ready, and per judgement the ms from
    the keypress to the item in the page and to its pictures decoded."""
    from playwright.sync_api import sync_playwright

    path = os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=path, args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": 1280, "height": 800})
        page.add_init_script(TIMING_JS)
        page.goto(base + "/accounts/login/?next=/p/compare-bench/")
        page.fill("input[name=username]", "bencher")
        page.fill("input[name=password]", "bench-pass-19")
        page.press("input[name=password]", "Enter")
        page.wait_for_url("**/p/compare-bench/")
        page.click("text=Start annotating")
        page.wait_for_selector("#work")
        page.wait_for_function("() => window.htmx && document.readyState === 'complete'")
        sync: list[float] = []
        for n in range(judgements):
            # An annotator reads for seconds; the bench waits `think_ms`, so
            # what is timed is the keypress, not a queue of votes.
            page.wait_for_timeout(think_ms)
            correctness = page.locator("#work").get_attribute("data-correctness") == "1"
            if page.locator("#work").get_attribute("data-layout") == "clips":
                # Seek sync: a frame step, then both players' positions.
                page.keyboard.press(".")
                page.wait_for_timeout(150)
                times = page.evaluate("window.studioClips.times()")
                sync.append(max(times) - min(times))
            if page.locator("#work").get_attribute("data-task") == "ranking":
                for key in "432":  # the last shown first; the first shown last
                    page.keyboard.press(key)
            page.keyboard.press("1")
            if correctness:
                page.keyboard.press("q")
                page.keyboard.press("p")
            url = page.url
            page.keyboard.press("Enter")
            page.wait_for_function("n => window.__lat.length > n", arg=n, timeout=30_000)
            assert page.url != url, "no next item"
        latencies = page.evaluate("window.__lat")
        split = page.evaluate("window.__split")
        ready = page.evaluate("window.__ready.filter(Boolean).length")
        server = page.evaluate(
            """performance.getEntriesByType("resource")
                .filter(e => /\\/submit\\/$/.test(e.name))
                .map(e => e.responseStart - e.requestStart)"""
        )
        browser.close()
    drive.sync = sync  # --clips: seconds between the players after each frame step
    return latencies, server, ready, split


def access_log_ms(log: Path) -> list[float]:
    times = []
    for line in log.read_text().splitlines():
        m = re.match(r"POST /a/\d+/submit/ (\d+) (\d+)$", line.strip())
        if m and m.group(1) == "200":
            times.append(float(m.group(2)))
    return times


def bench(
    kind: str, judgements: int, database_url: str, tmp: Path, think_ms: int, seed: str
) -> dict:
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "DATA_DIR": str(tmp / kind),
        "LOG_LEVEL": "WARNING",
        "CELERY_TASK_ALWAYS_EAGER": "true",
    }
    env.pop("DATABASE_URL", None)
    if kind == "gunicorn":
        env["DATABASE_URL"] = database_url
        env["DEBUG"] = "false"
        run([PY, "manage.py", "migrate", "--verbosity", "0"], env)
        run([PY, "manage.py", "flush", "--noinput", "--verbosity", "0"], env)
    else:
        env["DEBUG"] = "false"  # as `make run` (issue 20: gunicorn, DEBUG off)
        run([PY, "manage.py", "migrate", "--verbosity", "0"], env)
        run([PY, "manage.py", "collectstatic", "--noinput", "--verbosity", "0"], env)
    run([PY, "-c", seed, str(judgements + 20), str(tmp / f"{kind}-data")], env)
    log = tmp / f"{kind}.log"
    port = 8190 if kind == "embedded" else 8191
    # The embedded default as `make run` serves it: one gunicorn worker with
    # 8 threads on SQLite; PostgreSQL as `make web`: 2 workers x 4 threads.
    workers, threads = ("1", "8") if kind == "embedded" else ("2", "4")
    cmd = [
        str(Path(PY).parent / "gunicorn"), "config.wsgi", "--bind", f"127.0.0.1:{port}",
        "--workers", workers, "--worker-class", "gthread", "--threads", threads,
        "--access-logfile", str(tmp / f"{kind}-access.log"),
        "--access-logformat", "%(m)s %(U)s %(s)s %(M)s",
    ]  # fmt: skip
    with open(log, "w") as out:
        proc = subprocess.Popen(cmd, env=env, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT)
    try:
        base = f"http://127.0.0.1:{port}"
        wait_up(base, proc, log)
        latencies, ttfb, ready, split = drive(base, judgements, think_ms)
    finally:
        proc.terminate()
        proc.wait(10)
    logged = access_log_ms(tmp / f"{kind}-access.log")
    return {
        "server": kind,
        "n": len(latencies),
        "ready": ready,
        "paint_p50": statistics.median(latencies),
        "paint_p95": percentile(latencies, 95),
        "paint_max": max(latencies),
        "shown_p50": statistics.median(a for a, _ in split),
        "shown_p95": percentile([a for a, _ in split], 95),
        "decoded_p50": statistics.median(b for _, b in split),
        "decoded_p95": percentile([b for _, b in split], 95),
        "ttfb_p50": statistics.median(ttfb) if ttfb else None,
        "ttfb_p95": percentile(ttfb, 95) if ttfb else None,
        "log_p50": statistics.median(logged) if logged else None,
        "log_p95": percentile(logged, 95) if logged else None,
        "sync_max_ms": 1000 * max(drive.sync) if drive.sync else None,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--judgements", type=int, default=200)
    parser.add_argument("--only", choices=["embedded", "gunicorn"])
    parser.add_argument("--database-url", default=os.environ.get("DATABASE_URL", ""))
    parser.add_argument("--think-ms", type=int, default=500, help="pause before each item")
    parser.add_argument("--json", action="store_true")
    parser.add_argument(
        "--pictures",
        action="store_true",
        help="MMRB2 pairs of two 1024x1024 response images (every other one an edit)",
    )
    parser.add_argument(
        "--ranking4",
        action="store_true",
        help="a ranking project: four text responses per item, ranked by keys (issue 33)",
    )
    parser.add_argument(
        "--clips",
        action="store_true",
        help="pairs of two 720p 10-second H.264 clips: posters painted and both players "
        "ready (issue 35)",
    )
    args = parser.parse_args()
    seed = (
        SEED_CLIPS
        if args.clips
        else {
            (True, True): SEED_RANKING_PICTURES,
            (True, False): SEED_RANKING,
            (False, True): SEED_PICTURES,
            (False, False): SEED,
        }[(args.ranking4, args.pictures)]
    )
    kinds = [args.only] if args.only else ["embedded", "gunicorn"]
    if "gunicorn" in kinds:
        name = urlsplit(args.database_url).path.lstrip("/")
        if not name.startswith(("wt", "bench")):
            raise SystemExit("--database-url: your own PostgreSQL database (wt.. or bench..)")
    rows = []
    with tempfile.TemporaryDirectory(prefix="compare-bench-") as tmp:
        for kind in kinds:
            rows.append(
                bench(
                    kind,
                    args.judgements,
                    args.database_url,
                    Path(tmp),
                    args.think_ms,
                    seed,
                )
            )
    if args.json:
        print(json.dumps(rows, indent=2))
        return

    def ms(v):
        return "—" if v is None else f"{v:.1f}"

    print("| server | judgements (kept ready) | paint p50 | paint p95 | paint max "
          "| server TTFB p50 / p95 | access log p50 / p95 |")  # fmt: skip
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        print(
            f"| {r['server']} | {r['n']} ({r['ready']}) | {ms(r['paint_p50'])} ms "
            f"| {ms(r['paint_p95'])} ms "
            f"| {ms(r['paint_max'])} ms | {ms(r['ttfb_p50'])} / {ms(r['ttfb_p95'])} ms "
            f"| {ms(r['log_p50'])} / {ms(r['log_p95'])} ms |"
        )
        if r["sync_max_ms"] is not None:
            print(f"seek sync after a frame step, worst of {r['n']}: {ms(r['sync_max_ms'])} ms")


if __name__ == "__main__":
    main()
