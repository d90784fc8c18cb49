"""Evaluation: numpy metrics, the papers' tasks, and JSON reports."""
