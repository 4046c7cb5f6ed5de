"""A visitor's files: predictions read and checked, shared links stored and bounded."""
