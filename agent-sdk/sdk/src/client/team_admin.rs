//! Whole teams, for the admin token: delete one, export one as JSON Lines, import such a file
//! as a new team. Exports and imports stream: neither side holds the file in memory.

use super::error::{root_cause, Error};
use super::transport::{decode, read_error, Call};
use super::Client;
use crate::wire::Team;
use futures::{Stream, TryStreamExt};
use reqwest::Method;
use std::time::Duration;

/// How long an export or import may take: a large team's file takes a while to send.
const TRANSFER_TIMEOUT: Duration = Duration::from_secs(24 * 3600);

impl Client {
    /// `DELETE /v1/teams/{name}` (admin token): deletes the team and everything of it; its
    /// tokens stop working at once and its streams end.
    pub async fn delete_team(&self, name: &str) -> Result<(), Error> {
        let url = self.url(&["v1", "teams", name]);
        self.send(Call::new(Method::DELETE, url)).await.map(drop)
    }

    /// `GET /v1/teams/{name}/export` (admin token): the team as JSON Lines, as the bytes
    /// arrive. A stream that ends in an error is an incomplete file (an import refuses it).
    pub async fn export_team(
        &self,
        name: &str,
    ) -> Result<impl Stream<Item = Result<Vec<u8>, Error>>, Error> {
        let call = Call::get(self.url(&["v1", "teams", name, "export"])).wait(TRANSFER_TIMEOUT);
        let what = call.describe();
        let res = self.send(call).await?;
        Ok(res
            .bytes_stream()
            .map_ok(|chunk| chunk.to_vec())
            .map_err(move |e| Error::Protocol {
                what: what.clone(),
                reason: format!("the export was cut short: {}", root_cause(&e)),
            }))
    }

    /// `POST /v1/teams/{name}/import` (admin token): creates team `name` from an export's
    /// lines, all or nothing; agents keep their tokens. Sent once (a retry would meet the team
    /// it created: 409).
    pub async fn import_team<S>(&self, name: &str, lines: S) -> Result<Team, Error>
    where
        S: Stream<Item = std::io::Result<Vec<u8>>> + Send + 'static,
    {
        let url = self.on_current(&self.url(&["v1", "teams", name, "import"]));
        let what = format!("POST {}", url.path());
        let mut req = self
            .http()
            .post(url)
            .timeout(TRANSFER_TIMEOUT)
            .header(reqwest::header::CONTENT_TYPE, "application/x-ndjson")
            .body(reqwest::Body::wrap_stream(lines));
        if let Some(token) = self.token() {
            req = req.bearer_auth(token);
        }
        let res = req.send().await.map_err(|e| Error::Unreachable {
            url: self.urls_for_errors(),
            reason: root_cause(&e),
            attempts: 1,
        })?;
        if !res.status().is_success() {
            return Err(Error::Api(read_error(res).await));
        }
        decode(res, &what).await
    }
}
