"""What each person chooses about how the console shows things: their time zone, their locale
(how money and numbers are written) and the theme.

See :mod:`.services` for how a preference is read (once per login, kept in the session),
:mod:`.times` for how times are written for people and :mod:`.locales` for the locales.
"""
