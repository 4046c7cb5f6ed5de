"""One module per page's numbers: the verdict table in, plain records and frames out (no Streamlit)."""
