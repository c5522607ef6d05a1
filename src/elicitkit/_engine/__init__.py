"""The elicitation engine: runs, continuation across MCP requests, and routes."""
