"""Workflow pictures: Mermaid text from the engine's graph, and serving it."""
