//! `huddle mcp`: a stdio MCP server that serves huddle's tools and prompts (a client of the
//! daemon's `/mcp` with the agent's token) and forwards every other tool to the user's own MCP
//! server (`--forward <command>…`, started as a child and spoken to over its stdio). A skill that
//! calls `mcp__ccw-tools__team_msg` keeps working when `ccw-tools` is this front: `team_msg` is
//! huddle's, the file tools are still the user's server's.
//!
//! rmcp on every side: a client over streamable HTTP to the daemon, a client over the child's
//! pipes, a server on our stdin/stdout. A tool both offer is huddle's.

use crate::CliResult;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, GetPromptRequestParams, GetPromptResponse,
    Implementation, ListPromptsResult, ListToolsResult, PaginatedRequestParams, ServerCapabilities,
    ServerConfig, Tool,
};
use rmcp::service::{Peer, RequestContext, RunningService};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::{ErrorData, RoleClient, RoleServer, ServerHandler, ServiceExt};
use std::collections::HashSet;
use std::sync::Arc;

#[derive(Debug, clap::Args)]
pub struct McpArgs {
    /// The MCP server to forward every other tool to: its command and arguments, the rest of
    /// the line (`--forward npx -y ccw-mcp`). Without it only huddle's tools are served.
    #[arg(long, num_args = 1.., allow_hyphen_values = true, value_name = "COMMAND")]
    forward: Vec<String>,
}

/// The two servers behind the front.
#[derive(Clone)]
struct Front {
    huddle: Peer<RoleClient>,
    downstream: Option<Peer<RoleClient>>,
    /// huddle's tool names (read at start: a token's tools do not change): a tool both
    /// servers offer is huddle's.
    huddle_tools: Arc<HashSet<String>>,
    /// The downstream's tools that are not huddle's: the calls forwarded. Any other name goes
    /// to huddle, whose refusal (`forbidden` for another role's tool) the agent should read.
    forwarded: Arc<HashSet<String>>,
}

pub async fn run(url: &str, token: &str, args: McpArgs) -> CliResult {
    // rmcp's HTTP client brings rustls without a provider; an https daemon needs one (ring, as
    // the workspace's other clients use). Installed once; a second install is harmless.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let endpoint = format!("{}/mcp", url.trim_end_matches('/'));
    let config = StreamableHttpClientTransportConfig::with_uri(endpoint).auth_header(token);
    let huddle: RunningService<RoleClient, ()> = ()
        .serve(StreamableHttpClientTransport::from_config(config))
        .await
        .map_err(|e| format!("connecting to huddle's MCP at {url}/mcp: {e}"))?;
    let mut child = None;
    let downstream: Option<RunningService<RoleClient, ()>> = match args.forward.split_first() {
        None => None,
        Some((command, rest)) => {
            let mut spawned = tokio::process::Command::new(command)
                .args(rest)
                .stdin(std::process::Stdio::piped())
                .stdout(std::process::Stdio::piped())
                .kill_on_drop(true)
                .spawn()
                .map_err(|e| format!("starting the forwarded server `{command}`: {e}"))?;
            let pipes = (
                spawned
                    .stdout
                    .take()
                    .ok_or("the forwarded server has no stdout")?,
                spawned
                    .stdin
                    .take()
                    .ok_or("the forwarded server has no stdin")?,
            );
            child = Some(spawned);
            Some(
                ().serve(pipes)
                    .await
                    .map_err(|e| format!("speaking MCP to `{command}`: {e}"))?,
            )
        }
    };
    let names = |tools: Vec<Tool>| -> HashSet<String> {
        tools.into_iter().map(|t| t.name.to_string()).collect()
    };
    let huddle_tools = names(huddle.peer().list_all_tools().await?);
    let mut forwarded = HashSet::new();
    if let Some(down) = &downstream {
        forwarded = names(down.peer().list_all_tools().await?);
        forwarded.retain(|t| !huddle_tools.contains(t));
    }
    let front = Front {
        huddle: huddle.peer().clone(),
        downstream: downstream.as_ref().map(|d| d.peer().clone()),
        huddle_tools: Arc::new(huddle_tools),
        forwarded: Arc::new(forwarded),
    };
    let server = front.serve(rmcp::transport::stdio()).await?;
    server.waiting().await?;
    // Our client left: end the forwarded server with us.
    drop(downstream);
    if let Some(mut child) = child {
        let _ = child.kill().await;
    }
    drop(huddle);
    Ok(())
}

fn upstream_error(e: rmcp::ServiceError) -> ErrorData {
    match e {
        rmcp::ServiceError::McpError(e) => e,
        other => ErrorData::internal_error(other.to_string(), None),
    }
}

impl ServerHandler for Front {
    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let mut tools: Vec<Tool> = self.huddle.list_all_tools().await.map_err(upstream_error)?;
        if let Some(down) = &self.downstream {
            let theirs = down.list_all_tools().await.map_err(upstream_error)?;
            tools.extend(
                theirs
                    .into_iter()
                    .filter(|t| !self.huddle_tools.contains(t.name.as_ref())),
            );
        }
        Ok(ListToolsResult::with_all_items(tools))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let peer = match &self.downstream {
            Some(down) if self.forwarded.contains(request.name.as_ref()) => down,
            _ => &self.huddle,
        };
        peer.call_tool_once(request).await.map_err(upstream_error)
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        let prompts = self
            .huddle
            .list_all_prompts()
            .await
            .map_err(upstream_error)?;
        Ok(ListPromptsResult::with_all_items(prompts))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        self.huddle
            .get_prompt_once(request)
            .await
            .map_err(upstream_error)
    }

    fn get_info(&self) -> ServerConfig {
        let capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_prompts()
            .build();
        ServerConfig::new(capabilities)
            .with_server_info(Implementation::new("huddle-mcp", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "huddle's team tools (tasks, messages, team_msg, shared memory) and, forwarded, \
                 the tools of the user's own MCP server.",
            )
    }
}
