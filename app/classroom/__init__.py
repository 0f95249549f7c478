"""Learners, progress, classes and attempts: the database layer and its services."""
