"""The ``discrim`` command-line tool: a thin layer over the public API."""
