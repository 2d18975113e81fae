"""The Realtime API relay, `GET /v1/realtime?model=…` (OpenAI's Realtime protocol over a WebSocket; Azure
OpenAI's realtime endpoint): the key checked before the upgrade, one channel per session, frames relayed
both ways, each `response.done` billed as it arrives (docs/billing.md, Realtime sessions), limits on
sessions per key, idle time and length, and a close frame on shutdown.

handler.py opens a session, upstream.py reaches the channel, session.py relays and bills, limits.py
counts the open sessions per key, hub.py knows this process's sessions and closes them on shutdown.
"""
