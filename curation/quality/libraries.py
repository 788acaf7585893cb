"""Whether the label-quality extra (cleanlab, crowd-kit) is installed.

Asked by pages and the API to offer the analysis or say how to install it;
answered from the installed packages without importing them: importing
cleanlab.multiannotator and crowdkit.aggregation loads pandas, scikit-learn
and scipy (~240 MB), which would then stay in the web worker for its
lifetime (issue 32). The analysis imports them in the worker's child that
runs it; an install that cannot be imported fails there with
QualityUnavailable."""

from __future__ import annotations

from importlib.util import find_spec


def libraries_available() -> bool:
    return all(find_spec(name) is not None for name in ("cleanlab", "crowdkit"))
