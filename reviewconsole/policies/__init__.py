"""Approval policies: rules that decide routine approval requests, four eyes, standing approvals, shadow mode."""
