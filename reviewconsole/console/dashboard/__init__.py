"""The managers' dashboard (``/dashboard/``): figures per queue and workflow, drawn as SVG, live."""
