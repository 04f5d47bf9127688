"""One module per experiment: config -> results (arrays, tables, report sections)."""
