//! Outbound webhooks over HTTP: a coordinator registers, lists and deletes its team's
//! webhooks and reads their delivery log. Sending is `crate::webhooks`.

use super::authz::{act, Can};
use super::error::{ApiError, ApiResult};
use super::extract::{ApiJson, ApiQuery};
use super::openapi_types::*;
use super::AppState;
use crate::store::StoreError;
use crate::webhooks::address;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use huddle_wire::{NewWebhook, WebhookDeliveryList, WebhookList};
use serde::Deserialize;
use utoipa::IntoParams;

/// Registers a webhook for what the team posts from now on. The answer holds its `secret`,
/// shown only here: every delivery carries `x-huddle-signature: sha256=<hex>`, the HMAC-SHA256
/// of `"{x-huddle-timestamp}.{body}"` under that secret. The body has `text` and `content`
/// (so a Slack or Discord incoming webhook URL works as it is) and the details under `huddle`.
/// Failed attempts are retried with a doubling wait (`[webhooks] attempts`, `retry_base_ms`).
#[utoipa::path(
    post,
    path = "/v1/teams/{team}/webhooks",
    operation_id = "createWebhook",
    tag = "webhooks",
    params(TeamPath),
    request_body = NewWebhook,
    responses(
        (status = 201, description = "The webhook, with its secret (shown once)", body = huddle_wire::Webhook),
        WriteErrors,
    )
)]
pub async fn create(
    State(state): State<AppState>,
    Can(caller, _): Can<act::ManageWebhooks>,
    ApiJson(new): ApiJson<NewWebhook>,
) -> ApiResult<Response> {
    let settings = &state.settings.webhooks;
    if new.events.is_empty() {
        return Err(ApiError::bad_request("events", "name at least one event"));
    }
    let url = address::check_form(&new.url).map_err(|e| ApiError::bad_request("url", e))?;
    address::resolve(&url, settings.allow_private)
        .await
        .map_err(|e| ApiError::bad_request("url", e))?;
    let mut events = new.events.clone();
    events.sort_by_key(|e| e.as_str());
    events.dedup();
    let secret = crate::identity::new_token().replacen("hud_", "whsec_", 1);
    let hook = state
        .store
        .create_webhook(&caller, &new.url, &events, &secret, settings.max_per_team)
        .await?;
    Ok((StatusCode::CREATED, Json(hook)).into_response())
}

/// The team's webhooks, without their secrets.
#[utoipa::path(
    get,
    path = "/v1/teams/{team}/webhooks",
    operation_id = "listWebhooks",
    tag = "webhooks",
    params(TeamPath),
    responses(
        (status = 200, description = "The team's webhooks", body = WebhookList),
        ReadErrors,
    )
)]
pub async fn list(
    State(state): State<AppState>,
    Can(caller, _): Can<act::ManageWebhooks>,
) -> ApiResult<Json<WebhookList>> {
    Ok(Json(WebhookList {
        webhooks: state.store.list_webhooks(caller.team_id).await?,
    }))
}

/// `{team}` and a webhook `{id}`.
#[derive(IntoParams)]
#[into_params(parameter_in = Path)]
#[allow(dead_code)] // documentation only
pub struct WebhookPath {
    /// The team's name.
    #[param(pattern = "^[a-z0-9][a-z0-9_-]{0,62}$", example = "qa")]
    pub team: String,
    /// The webhook's id.
    #[param(example = 1)]
    pub id: i64,
}

/// Deletes a webhook and its delivery log; nothing more is sent to it.
#[utoipa::path(
    delete,
    path = "/v1/teams/{team}/webhooks/{id}",
    operation_id = "deleteWebhook",
    tag = "webhooks",
    params(WebhookPath),
    responses(
        (status = 204, description = "Deleted"),
        ReadErrors,
    )
)]
pub async fn delete(
    State(state): State<AppState>,
    Can(caller, _): Can<act::ManageWebhooks>,
    Path((_, id)): Path<(String, String)>,
) -> ApiResult<StatusCode> {
    let id: i64 = id
        .parse()
        .map_err(|_| ApiError::from(StoreError::not_found(format!("webhook {id}"))))?;
    state.store.delete_webhook(caller.team_id, id).await?;
    Ok(StatusCode::NO_CONTENT)
}

#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct DeliveriesQuery {
    /// Only this webhook's deliveries.
    webhook: Option<i64>,
    /// How many, newest first (1–1000, default 100).
    #[param(minimum = 1, maximum = 1000)]
    limit: Option<u32>,
}

/// The newest deliveries of the team's webhooks: what was sent for which message or event,
/// after how many attempts, and how it ended (`delivered` or `failed`, with the last answer's
/// status or the error). Each webhook keeps its newest `[webhooks] keep_deliveries`.
#[utoipa::path(
    get,
    path = "/v1/teams/{team}/webhooks/deliveries",
    operation_id = "listWebhookDeliveries",
    tag = "webhooks",
    params(TeamPath, DeliveriesQuery),
    responses(
        (status = 200, description = "Deliveries, newest first", body = WebhookDeliveryList),
        QueryErrors,
    )
)]
pub async fn deliveries(
    State(state): State<AppState>,
    Can(caller, _): Can<act::ManageWebhooks>,
    ApiQuery(q): ApiQuery<DeliveriesQuery>,
) -> ApiResult<Json<WebhookDeliveryList>> {
    let limit = q.limit.unwrap_or(100);
    if !(1..=1000).contains(&limit) {
        return Err(ApiError::bad_request("limit", "limit must be 1 to 1000"));
    }
    Ok(Json(WebhookDeliveryList {
        deliveries: state
            .store
            .webhook_deliveries(caller.team_id, q.webhook, limit as usize)
            .await?,
    }))
}
