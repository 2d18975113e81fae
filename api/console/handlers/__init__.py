"""Console handlers: one module per resource; their routes are the table in api/console/routes.py."""
