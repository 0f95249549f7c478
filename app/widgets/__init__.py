"""One module per widget: its Params model, its compute function, its template name."""
