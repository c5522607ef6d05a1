"""`elicitkit call` and `elicitkit tools`: a terminal MCP client that shows every kind of question."""
