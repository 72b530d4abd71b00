"""Shared pytest set-up. Keep it small: fixtures that many test files need.

Progress bars are switched off for the whole run so
no test (and no notebook kernel started by a test) writes noise to stderr.
"""

import os

# The toolkit reads LARES_PROGRESS; tqdm itself reads TQDM_DISABLE (tqdm >= 4.66).
os.environ.setdefault("LARES_PROGRESS", "0")
os.environ.setdefault("TQDM_DISABLE", "1")
