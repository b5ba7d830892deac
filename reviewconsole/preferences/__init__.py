"""What each person chooses about how the console shows things: their time zone and the theme.

See :mod:`.services` for how a preference is read (once per login, kept in the session) and
:mod:`.times` for how times are written for people.
"""
