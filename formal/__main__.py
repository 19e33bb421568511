"""``python -m formal`` is ``ptxlayout``."""

import sys

from .cli import main

sys.exit(main())
