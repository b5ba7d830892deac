"""Workflow sessions and their events: the engine's store on the ORM, runs as tasks, the admin timeline."""
