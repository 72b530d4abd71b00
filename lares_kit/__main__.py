"""``python -m lares_kit``: the ``lares`` command, where the ``lares`` script is not on the PATH."""

import sys

from .cli.commands import main

sys.exit(main())
