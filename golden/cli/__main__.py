"""``python -m reconverge.golden.cli``: the ``reconverge`` command."""

import sys

from reconverge.golden.cli import main

sys.exit(main())
