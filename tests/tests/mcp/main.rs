//! `/mcp`: huddle's tools through a real MCP client (the official Python SDK, `client.py`)
//! against a real daemon on port 0, checked against the HTTP API; and the endpoint's
//! authentication at the HTTP level. One test binary per area; a module per concern.

mod auth;
mod evidence;
mod front;
mod gates;
mod history;
mod leases;
mod limits;
mod project_claims;
mod prompts;
mod readiness;
mod search;
mod team_msg;
mod tool_access;
mod tools;
mod ts_sdk;
