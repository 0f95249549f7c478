"""FastAPI routers, thin: parse, call one service, render one template."""
