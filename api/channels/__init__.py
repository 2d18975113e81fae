"""Channel administration: the channel form, keys, tags, tests and the health monitor."""
