import { del, post, put } from './client';

// MCP servers (admin): the gateway's registered Model Context Protocol servers (/api/mcp/).
export const createMcpServer = (server) => post('/api/mcp/', server);
export const updateMcpServer = (server) => put('/api/mcp/', server);
export const deleteMcpServer = (id) => del(`/api/mcp/${id}`);
// Connects with the stored credential and lists the tools: {tools: [{name, description, offered}], time_ms}.
// Silent: the page shows the failure (the server's reason) in place of the tools.
export const testMcpServer = (id) => post(`/api/mcp/${id}/test`, undefined, { silent: true });
