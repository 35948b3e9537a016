"""Helpers and fixtures the project's tests share."""
