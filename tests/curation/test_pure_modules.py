"""The science modules stay free of Django (DESIGN §3): each is imported in a
fresh interpreter, which must not have loaded django afterwards. So they are
tested without a database and run anywhere (a notebook, a script)."""

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

PURE_MODULES = [
    "curation.verdicts.rule",
    "curation.verdicts.ranking_rule",
    "curation.agreement.ranking",
    "curation.agreement.ranking_bootstrap",
    "curation.agreement.ranking_diagnostics",
    "curation.agreement.ranking_aggregate",
    "curation.agreement.stats",
    "curation.evaluation.calibration",
    "curation.agreement.diagnostics",
    "curation.releases.exporter",
    "curation.releases.parquet",
    "curation.releases.mixes.rows",
    "curation.releases.mixes.files",
    "curation.exports.records",
    "curation.exports.formats",
    "curation.benchmarks.mrb.scoring",
    "curation.benchmarks.mrb.scoring_input",
    "curation.benchmarks.mrb.scoring_output",
    "curation.benchmarks.mmrb2.scoring",
    "curation.benchmarks.mmrb2.judge",
    "curation.benchmarks.mmrb2.card",
    "curation.benchmarks.mmrb2.annotations",
    "curation.benchmarks.mrb.card",
    "curation.benchmarks.mrb.judge",
    "curation.benchmarks.mrb.leaderboard",
    "curation.benchmarks.rewardbench2.scoring",
    "curation.benchmarks.rewardbench2.judge",
    "curation.benchmarks.rewardbench2.card",
    "curation.benchmarks.ranked.scoring",
    "curation.benchmarks.ranked.card",
    "curation.benchmarks.vlrb.scoring",
    "curation.benchmarks.vlrb.judge",
    "curation.benchmarks.vlrb.card",
    "curation.evaluation.judge_client",
    "curation.evaluation.key_encryption",
    "curation.evaluation.media_content",
    "curation.quality.label_quality",
    "curation.quality.probability",
    "curation.quality.simulation",
]


@pytest.mark.parametrize("module", PURE_MODULES)
def test_module_imports_no_django(module):
    code = (
        f"import sys, {module}; "
        "sys.exit(any(m == 'django' or m.startswith('django.') for m in sys.modules))"
    )
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, f"{module} imports Django\n{result.stderr}"
