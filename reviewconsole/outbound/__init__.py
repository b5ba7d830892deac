"""Outbound events: signed Standard Webhooks to subscribers when interrupts and sessions change."""
