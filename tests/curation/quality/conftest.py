import os

import pytest

from curation.quality.libraries import libraries_available

# The label-quality extra (cleanlab, crowd-kit) is optional for `make run`; its
# tests skip where it is absent, but never on CI, which installs .[dev].
needs_quality_extra = pytest.mark.skipif(
    not libraries_available() and not os.environ.get("CI"),
    reason='the quality extra is not installed (pip install -e ".[quality]")',
)
