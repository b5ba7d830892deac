"""Signed inbound webhooks that start workflow sessions (Standard Webhooks)."""
