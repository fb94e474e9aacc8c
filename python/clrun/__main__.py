"""python -m clrun ...: the clrun command (as the console script)."""
import sys

from ._cli import main

sys.exit(main())
