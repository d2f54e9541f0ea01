"""Optimizing passes over the IR, each IR -> IR."""
