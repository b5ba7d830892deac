"""The live channel: each queue's change log, the group messages and the ``/ws/inbox/`` consumer."""
