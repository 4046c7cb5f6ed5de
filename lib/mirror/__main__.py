"""`python -m lib.mirror OUT_DIR [--full] [--seed N]`."""

import sys

from lib.mirror.hub import main

sys.exit(main())
