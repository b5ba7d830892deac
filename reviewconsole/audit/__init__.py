"""The append-only audit log: every action by a person or a client, with who, when, where and what."""
