"""``python -m ptxlayout`` is the ``ptxlayout`` command (``formal.cli``)."""

import sys

from formal.cli import main

sys.exit(main())
