"""meson test's entry to the Python bindings' tests: skipped (exit 77) when python3 lacks pytest or
NumPy, else pytest on this folder with the build's libclrun (CLRUN_LIBRARY) and python/ on the path."""
import os
import sys

try:
    import numpy  # noqa: F401
    import pytest
except ImportError as e:
    print(f"the Python tests need pytest and NumPy ({e}): skipped")
    sys.exit(77)
here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(here)), "python"))
sys.exit(pytest.main(["-q", "-p", "no:cacheprovider", here] + sys.argv[1:]))
