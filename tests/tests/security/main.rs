//! Roles, tokens and limits over real HTTP.
//! One test binary per area; a module per concern.

mod connections;
mod dependency_edges;
mod files;
mod guessing;
mod lease_stall;
mod limits;
mod open_files;
mod patch_bomb;
mod recipients;
mod revocation;
mod roles;
mod search_share;
mod strict_input;
mod team_caps;
mod vanished_peers;
