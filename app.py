"""Entry point: `streamlit run app.py`. Routing, page config and the shared sidebar."""

from ui.frame import run_app

run_app()
