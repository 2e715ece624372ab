"""Rolling-window rate limits kept in Redis, shared by every process and by REST and `/mcp`."""
