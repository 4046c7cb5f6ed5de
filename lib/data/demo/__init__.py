"""The built-in demo: its mirror built by a niced process of its own (`builder`: lock,
progress file; started with `builder.RUN`, never `python -m`, which would import it twice)
and its light tables generated in the server meanwhile (`light`). Importers use this face."""

from lib.data.demo import builder, light
from lib.data.demo.builder import DEMO_DIR_ENV, DEMO_SEED, DEMO_VERSION, demo_dir

__all__ = ["DEMO_DIR_ENV", "DEMO_SEED", "DEMO_VERSION", "builder", "demo_dir", "light"]
