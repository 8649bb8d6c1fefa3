"""``python -m vcpcr``: the ``vcpcr`` command."""

import sys

from vcpcr.cli import main

sys.exit(main())
