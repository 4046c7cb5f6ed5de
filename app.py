"""Entry point: `streamlit run app.py`. Routing, page config and the shared sidebar."""

from ui.nav import navigation

page = navigation()  # first, before the heavy imports: no stray "app" page in the sidebar

from ui.frame import run_app  # noqa: E402

run_app(page)
