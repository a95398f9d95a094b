//! The OTLP/HTTP exporter, sending with the workspace's reqwest client.

use crate::ids::Ids;
use async_trait::async_trait;
use opentelemetry_http::{Bytes, HttpClient, HttpError, Request, Response};
use opentelemetry_otlp::{Protocol, WithExportConfig, WithHttpConfig};
use opentelemetry_sdk::trace::SdkTracerProvider;
use opentelemetry_sdk::Resource;
use std::time::Duration;

/// The batch exporter runs on a thread of its own, outside any runtime: a request is handed to
/// the runtime the telemetry was started in, and its answer awaited from there.
#[derive(Debug)]
struct Sender {
    client: reqwest::Client,
    runtime: tokio::runtime::Handle,
}

#[async_trait]
impl HttpClient for Sender {
    async fn send_bytes(&self, request: Request<Bytes>) -> Result<Response<Bytes>, HttpError> {
        let (parts, body) = request.into_parts();
        let client = self.client.clone();
        let answer = self
            .runtime
            .spawn(async move {
                let sent = client
                    .request(parts.method, parts.uri.to_string())
                    .headers(parts.headers)
                    .body(body)
                    .send()
                    .await?;
                let status = sent.status();
                let headers = sent.headers().clone();
                let body = sent.bytes().await?;
                Ok::<_, reqwest::Error>((status, headers, body))
            })
            .await??;
        let (status, headers, body) = answer;
        let mut response = Response::new(body);
        *response.status_mut() = status;
        *response.headers_mut() = headers;
        Ok(response)
    }
}

/// A tracer provider exporting to `url` in batches (the SDK's `OTEL_BSP_*` settings apply).
pub(crate) fn provider(service: &'static str, url: &str) -> Result<SdkTracerProvider, String> {
    let runtime = tokio::runtime::Handle::try_current()
        .map_err(|_| "telemetry needs a Tokio runtime".to_string())?;
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(10))
        .build()
        .map_err(|e| format!("OTLP client: {e}"))?;
    let exporter = opentelemetry_otlp::SpanExporter::builder()
        .with_http()
        .with_http_client(Sender { client, runtime })
        .with_protocol(Protocol::HttpBinary)
        .with_endpoint(url)
        .build()
        .map_err(|e| format!("OTLP exporter for {url}: {e}"))?;
    let resource = Resource::builder().with_service_name(service).build();
    Ok(SdkTracerProvider::builder()
        .with_id_generator(Ids::default())
        .with_resource(resource)
        .with_batch_exporter(exporter)
        .build())
}
