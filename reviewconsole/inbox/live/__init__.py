"""The live channel: each queue's change log, its publisher, the group messages and the ``/ws/inbox/`` consumer."""
