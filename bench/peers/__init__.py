"""Peer side of the workflow-engine benchmark (LangGraph, Google ADK, Microsoft Agent Framework)."""
