from django.core.management.base import BaseCommand, CommandError

from annotate.models import Project
from curation.agreement import reports
from curation.templatetags.stats import _number


def cell(value, style: str = "") -> str:
    if value is None:
        return "…"
    if isinstance(value, reports.agreement.Undefined):
        return "undefined"
    if isinstance(value, reports.agreement.Interval):
        return f"[{_number(value.low, style)}, {_number(value.high, style)}]"
    return _number(float(value), style)


class Command(BaseCommand):
    help = "Print a project's agreement tables (the dashboard's figures)."

    def add_arguments(self, parser):
        parser.add_argument("project", help="project slug")
        parser.add_argument(
            "--bootstrap",
            action="store_true",
            help="recompute bootstrap CIs and alpha deltas now (otherwise use the cached ones)",
        )
        parser.add_argument(
            "--csv", choices=["domains", "annotators"], help="print one table as CSV"
        )

    def handle(self, *args, **opts):
        project = Project.objects.filter(slug=opts["project"]).first()
        if project is None:
            raise CommandError(f"no project with slug {opts['project']!r}")
        if opts["bootstrap"]:
            reports.refresh_cache(project=project)
        report = reports.build_report(project)
        if opts["csv"] == "domains":
            self.stdout.write(reports.domains_csv(report), ending="")
            return
        if opts["csv"] == "annotators":
            self.stdout.write(reports.annotators_csv(report), ending="")
            return
        cache = report.cache
        if cache and cache.computed_at:
            self.stdout.write(f"CIs and Δα computed {cache.computed_at:%Y-%m-%d %H:%M:%S} UTC")
        else:
            self.stdout.write("CIs and Δα not computed yet (use --bootstrap)")
        undefined = []
        rows = [["domain", "items", "votes", "done", "alpha", "95% CI", "AC1", "% agree", "ties",
                 "corr. alpha", "contested"]]  # fmt: skip
        for r in report.domains:
            s = r.summary
            for name, value in (
                ("alpha", s.choice.alpha),
                ("correctness alpha", s.correctness.alpha),
            ):
                if isinstance(value, reports.agreement.Undefined):
                    undefined.append(f"{r.title} {name}: {value.reason}")
            rows.append(
                [
                    r.title, str(r.n_items), str(r.n_votes), f"{r.percent_complete}%",
                    cell(s.choice.alpha), cell(r.alpha_ci), cell(s.choice.ac1),
                    cell(s.choice.pairwise_agreement, "pct"), cell(s.tie_rate, "pct"),
                    cell(s.correctness.alpha), str(r.contested),
                ]
            )  # fmt: skip
        self._table(rows)
        for line in undefined:
            self.stdout.write(f"  undefined — {line}")
        rows = [["annotator", "votes", "agrees", "kappa", "Δα", "gold", "left picks", "95% CI",
                 "ties", "median s"]]  # fmt: skip
        for a in report.annotators:
            s = a.stats
            rows.append(
                [
                    a.name + (" ⚠ side bias" if a.left_bias else ""), str(s.n_votes),
                    cell(s.choice.agreement, "pct"), cell(s.choice.kappa),
                    cell(a.alpha_delta, "signed"),
                    cell(s.gold_accuracy, "pct") if s.n_gold else "-",
                    cell(s.left_pick_rate, "pct"), cell(s.left_pick_ci, "pct"),
                    cell(s.tie_rate, "pct"), f"{s.median_seconds:.1f}",
                ]
            )  # fmt: skip
        self.stdout.write("")
        self._table(rows)

    def _table(self, rows):
        widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
        for n, row in enumerate(rows):
            self.stdout.write("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)))
            if n == 0:
                self.stdout.write("  ".join("-" * w for w in widths))
