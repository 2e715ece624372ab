"""Audit log of authenticated calls and usage counters per key, written off the request path."""
