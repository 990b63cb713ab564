"""Validation, parameter-constraint and random-stream helpers shared by discrim estimators."""
