"""Accounts, API keys, the token bootstrap by e-mail code, and key management."""
