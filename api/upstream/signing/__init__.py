"""Request signing and credential exchange for providers that need more than a static header."""
