"""Remote Model Context Protocol servers behind the gateway: their registry (registry.py), which of
them a key may use (access.py), the outbound client that speaks to them (client.py, over the
transports of transports.py, with the OAuth credentials of credentials.py), their administration
(admin.py) and health (health.py). The `/mcp` endpoint clients call is api.relay.mcp."""
