"""The structured SSA IR (core), its names, and the lowering from gast to it."""
