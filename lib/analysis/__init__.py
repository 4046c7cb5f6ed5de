"""One module per page's numbers: the verdict table in, records and frames out
(no Streamlit)."""
