"""Settings modules: ``embedded`` (the one-command default), ``production`` and ``test``."""
