"""The ways in: the CLI, the MCP server. They call the library and hold no memory logic."""
