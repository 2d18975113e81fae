"""Accounts: users, passwords, login guard, access tokens, mail."""
