"""Plots of fitted discrim models (matplotlib, the ``plot`` extra); each function returns Axes."""
