"""The Bearer check, allowlists, rate limits and audit of every call, in one middleware."""
