use serde::{Deserialize, Serialize};

/// The one error shape every endpoint answers with: `{"error": {"code", "message", "details"}}`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ErrorBody {
    pub error: ErrorInfo,
}

/// Machine-readable `code`, human-readable `message`, and optional structured `details`
/// (the offending field, the cycle, the known recipients…).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ErrorInfo {
    pub code: String,
    pub message: String,
    #[serde(default, skip_serializing_if = "serde_json::Value::is_null")]
    pub details: serde_json::Value,
}
