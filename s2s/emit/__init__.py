"""Emission: an IR function to readable Python source."""
