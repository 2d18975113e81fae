"""Console handlers: one module per resource, each exposing `routes` (a web.RouteTableDef)."""
