"""Shared pytest set-up. Keep it small: fixtures that many test files need.

Progress bars are switched off for the whole run so
no test (and no notebook kernel started by a test) writes noise to stderr.
"""

import os

# The toolkit reads LARES_PROGRESS; tqdm itself reads TQDM_DISABLE (tqdm >= 4.66).
os.environ.setdefault("LARES_PROGRESS", "0")
os.environ.setdefault("TQDM_DISABLE", "1")
# What the toolkit writes for a user by default (memory stores, bench records: lares_kit.files.paths) goes to one
# temporary folder for the whole run, not into the home of whoever runs the tests. A test that checks the
# rule itself sets its own.
if "LARES_DATA" not in os.environ:
    import tempfile

    os.environ["LARES_DATA"] = tempfile.mkdtemp(prefix="lares-test-data-")


import shutil  # noqa: E402

import pytest  # noqa: E402

# Notebook runs happen on a date years ahead of today (Debian's faketime, installed by `make test`):
# a checked output that holds today's date, or a lesson that reads the wall clock, fails now,
# not next term. faketime moves every clock by the same offset, the monotonic one too: with it left
# alone (--exclude-monotonic) a Jupyter kernel stops answering. The price: libfaketime 0.9.10 does
# not wrap sem_clockwait, so a thread's timed wait (threading.Event.wait(timeout)) never times out
# under it -- no code these runs go through waits that way. The whole suite runs the same way:
#     faketime -f +5y make test
YEARS_AHEAD = "+5y"


@pytest.fixture
def years_ahead():
    """``years_ahead(cmd)``: the command run with the date moved ahead (unchanged without faketime)."""
    faketime = shutil.which("faketime")
    return lambda cmd: [faketime, "-f", YEARS_AHEAD, *cmd] if faketime else list(cmd)
