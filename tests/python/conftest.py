"""What every test module of the Python bindings shares: a context on the test device for the
module, and a random generator whose seed is printed (shown when a test fails) and taken from
$CLRUN_TEST_SEED when it is set."""
import os

import numpy as np
import pytest

import clrun

DEVICE = os.environ.get("CLRUN_TEST_DEVICE") or None
SEED = int(os.environ.get("CLRUN_TEST_SEED", "0")) or int.from_bytes(os.urandom(4), "little")


@pytest.fixture(scope="module")
def ctx():
    with clrun.open(DEVICE) as c:
        yield c


@pytest.fixture
def rng():
    print(f"seed {SEED}")
    return np.random.default_rng(SEED)
