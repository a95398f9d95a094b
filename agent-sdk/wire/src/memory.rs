use serde::{Deserialize, Serialize};

/// The team's shared memory document and its version (for `If-Match`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct Memory {
    pub version: i64,
    pub doc: serde_json::Value,
}

/// `PUT /v1/teams/{team}/memory`: replace the whole document.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ReplaceMemory {
    #[cfg_attr(feature = "openapi", schema(value_type = Object))]
    pub doc: serde_json::Value,
}
