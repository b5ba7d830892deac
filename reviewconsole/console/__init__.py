"""The console shell: base pages, the session JSON view, and the serve / demo commands."""
