"""Write docs/seeds.md: each seed experiment's published number beside the same protocol run here.

    .venv/bin/python scripts/seeds_table.py           # writes docs/seeds.md
    .venv/bin/python scripts/seeds_table.py --print   # prints it instead

The code is :mod:`lares_kit.bench.seeds_table` (the package carries the table, for notebook 08b).
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from lares_kit.bench.seeds_table import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
