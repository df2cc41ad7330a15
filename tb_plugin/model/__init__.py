"""The trace model: immutable columns, how they are built from decoded events, their file format, and what is
derived from the model alone (steps, the trace viewer's index, answers stored beside a cached model).

Imports nothing of Profscope outside ``model/``.
"""
