"""Losses, one per module, as pure functions of plain tensors (each docstring cites its equation)."""
