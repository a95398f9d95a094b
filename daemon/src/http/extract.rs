//! Extractors that turn every client mistake into the API's own error shape: JSON bodies,
//! query strings, `If-Match`. (Identity is in `identity.rs`, permissions in `authz.rs`.)

use super::error::ApiError;
use axum::body::Bytes;
use axum::extract::{FromRequest, FromRequestParts, RawPathParams, Request};
use axum::http::request::Parts;
use axum::http::{header, StatusCode};
use huddle_wire::codes;
use serde::de::DeserializeOwned;
use serde_json::json;

/// A JSON object body; malformed JSON, wrong types and unknown fields answer 400 naming the
/// field, oversized bodies 413. An empty body counts as `{}` so bodiless POSTs work with curl.
pub struct ApiJson<T>(pub T);

impl<T: DeserializeOwned, S: Send + Sync> FromRequest<S> for ApiJson<T> {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        let Body(bytes) = Body::from_request(req, state).await?;
        parse_object(&bytes).map(ApiJson)
    }
}

/// What [`ApiJson`] does with a body it has read: empty is `{}`, an array is refused.
pub fn parse_object<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, ApiError> {
    let bytes: &[u8] = if bytes.iter().all(u8::is_ascii_whitespace) {
        b"{}"
    } else {
        bytes
    };
    // serde also reads a struct from an array, field by field in order (`["qa"]` as
    // `{"name": "qa"}`); no client means that, and the API documents objects only.
    if bytes.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'[') {
        return Err(ApiError::bad_request(
            "",
            "the body must be a JSON object, not an array",
        ));
    }
    parse_json(bytes)
}

/// The raw body, with the size limit answered as 413 in the API's error shape.
pub struct Body(pub Bytes);

impl<S: Send + Sync> FromRequest<S> for Body {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        Bytes::from_request(req, state)
            .await
            .map(Body)
            .map_err(|rejection| {
                if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE {
                    ApiError::new(
                        StatusCode::PAYLOAD_TOO_LARGE,
                        codes::TOO_LARGE,
                        "the request body is larger than the configured limit",
                    )
                } else {
                    ApiError::new(
                        StatusCode::BAD_REQUEST,
                        codes::INVALID_BODY,
                        rejection.body_text(),
                    )
                }
            })
    }
}

/// One JSON value and nothing after it but whitespace (`{"a":1} xyz` is refused).
pub fn parse_json<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, ApiError> {
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let value = serde_path_to_error::deserialize(&mut de).map_err(field_error)?;
    de.end().map_err(|e| {
        ApiError::new(
            StatusCode::BAD_REQUEST,
            codes::INVALID_JSON,
            format!("the body is not valid JSON: {e}"),
        )
    })?;
    Ok(value)
}

/// A batch body (`{"<list>": [{…}, …]}`) holding 1 to `max` items, each a JSON object (serde
/// would also read an item from an array, field by field). Parsed once; errors name the item.
pub fn parse_batch<T: DeserializeOwned>(
    bytes: &[u8],
    list: &str,
    max: usize,
) -> Result<T, ApiError> {
    let raw: serde_json::Value = parse_object(bytes)?;
    if let Some(items) = raw[list].as_array() {
        if items.is_empty() || items.len() > max {
            return Err(ApiError::bad_request(
                list,
                format!("`{list}` must hold 1 to {max} items, got {}", items.len()),
            ));
        }
        if let Some(i) = items.iter().position(|item| !item.is_object()) {
            return Err(ApiError::bad_request(
                &format!("{list}[{i}]"),
                format!("{list}[{i}]: each item must be a JSON object"),
            ));
        }
    }
    serde_path_to_error::deserialize(raw).map_err(field_error)
}

/// A JSON value as `T`, refused like a body: wrong types and unknown fields name the field
/// (the MCP tools' arguments).
pub fn parse_value<T: DeserializeOwned>(value: serde_json::Value) -> Result<T, ApiError> {
    serde_path_to_error::deserialize(value).map_err(field_error)
}

/// A deserialisation error as the API's 400: syntax errors as `invalid_json`, the rest as
/// `invalid_field` naming the path.
fn field_error(e: serde_path_to_error::Error<serde_json::Error>) -> ApiError {
    let path = e.path().to_string();
    let inner = e.into_inner();
    if inner.is_syntax() || inner.is_eof() {
        ApiError::new(
            StatusCode::BAD_REQUEST,
            codes::INVALID_JSON,
            format!("the body is not valid JSON: {inner}"),
        )
    } else {
        let mut field = if path == "." { String::new() } else { path };
        // serde names a missing field only in its message; the path stops at its parent.
        if let Some(missing) = missing_field(&inner.to_string()) {
            field = match field.is_empty() {
                true => missing.to_string(),
                false => format!("{field}.{missing}"),
            };
        }
        let message = if field.is_empty() {
            inner.to_string()
        } else {
            format!("{field}: {inner}")
        };
        ApiError::new(StatusCode::BAD_REQUEST, codes::INVALID_FIELD, message)
            .with_details(json!({ "field": field }))
    }
}

/// `id` from serde's "missing field `id` at line …".
fn missing_field(message: &str) -> Option<&str> {
    let rest = message.strip_prefix("missing field `")?;
    rest.split('`').next().filter(|f| !f.is_empty())
}

/// A query string; a bad value answers 400 naming the parameter.
pub struct ApiQuery<T>(pub T);

impl<T: DeserializeOwned, S: Send + Sync> FromRequestParts<S> for ApiQuery<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, Self::Rejection> {
        axum::extract::Query::<T>::try_from_uri(&parts.uri)
            .map(|q| ApiQuery(q.0))
            .map_err(|e| {
                ApiError::new(StatusCode::BAD_REQUEST, codes::INVALID_QUERY, e.body_text())
            })
    }
}

/// `If-Match: 3` or `If-Match: "3"` (the ETag form huddle sends); `*` matches any current
/// version (RFC 9110), as no header does.
pub struct IfMatch(pub Option<i64>);

impl<S: Send + Sync> FromRequestParts<S> for IfMatch {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, Self::Rejection> {
        let Some(value) = parts.headers.get(header::IF_MATCH) else {
            return Ok(IfMatch(None));
        };
        let text = value
            .to_str()
            .unwrap_or_default()
            .trim()
            .trim_start_matches("W/")
            .trim_matches('"');
        if text == "*" {
            return Ok(IfMatch(None));
        }
        text.parse::<i64>().map(|v| IfMatch(Some(v))).map_err(|_| {
            ApiError::bad_request(
                "If-Match",
                "If-Match must be a version number such as 3 or \"3\"",
            )
        })
    }
}

/// The `{team}` of the path, if the route has one.
pub fn path_team(params: &RawPathParams) -> Option<&str> {
    params.iter().find(|(k, _)| *k == "team").map(|(_, v)| v)
}
