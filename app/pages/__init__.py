"""Page services: what a router calls to build a step page, a drill view or a guess's answer (below app.web)."""
