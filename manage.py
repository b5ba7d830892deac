#!/usr/bin/env python
"""Django's command-line utility for reviewconsole."""

import os
import sys


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "reviewconsole.settings.embedded")
    from django.core.management import execute_from_command_line

    from reviewconsole.settings.env import EnvironmentValueError

    try:
        execute_from_command_line(sys.argv)
    except EnvironmentValueError as exc:  # a typo in the environment: one clear line, no traceback
        sys.exit(f"ImproperlyConfigured: {exc}")


if __name__ == "__main__":
    main()
