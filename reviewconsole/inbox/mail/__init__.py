"""Email to queue members about new items."""
