"""Tools around derivatives: graphs of the IR, display in Jupyter."""
