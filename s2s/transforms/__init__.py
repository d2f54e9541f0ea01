"""The derivative transforms: reverse mode, forward mode, element reads and writes, checkpointing, and the inlining of rules."""
