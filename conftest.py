"""Root conftest: makes `lib`, `ui` and `pages` importable from the tests."""
