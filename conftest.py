"""Root conftest: makes `lib`, `ui` and `pages` importable from the tests."""

import pytest


@pytest.fixture(autouse=True)
def _metrics_doctest_names(doctest_namespace: dict) -> None:
    """The doctests of `lib/metrics/` read the public API as one namespace, as a caller of
    the `lib.metrics` facade does (an example of `ac1` may build a `confusion`)."""
    import lib.metrics

    doctest_namespace.update({name: getattr(lib.metrics, name) for name in lib.metrics.__all__})
