//! Outbound webhooks (coordinator): register, list, delete, and read the delivery log.

use super::transport::Call;
use super::{Client, Error};
use crate::wire::{
    NewWebhook, Webhook, WebhookDelivery, WebhookDeliveryList, WebhookList, WebhookTrigger,
};
use reqwest::Method;

impl Client {
    /// `POST …/webhooks`: registers `url` for `events`. The answer holds the signing secret,
    /// which the daemon never shows again.
    pub async fn create_webhook(
        &self,
        url: &str,
        events: &[WebhookTrigger],
    ) -> Result<Webhook, Error> {
        let body = NewWebhook {
            url: url.to_string(),
            events: events.to_vec(),
        };
        self.json(Call::post(self.team_url(&["webhooks"])?).json(&body)?)
            .await
    }

    /// `GET …/webhooks`: the team's webhooks, without their secrets.
    pub async fn list_webhooks(&self) -> Result<Vec<Webhook>, Error> {
        let list: WebhookList = self.json(Call::get(self.team_url(&["webhooks"])?)).await?;
        Ok(list.webhooks)
    }

    /// `DELETE …/webhooks/{id}`.
    pub async fn delete_webhook(&self, id: i64) -> Result<(), Error> {
        let url = self.team_url(&["webhooks", &id.to_string()])?;
        self.send(Call::new(Method::DELETE, url)).await.map(drop)
    }

    /// `GET …/webhooks/deliveries`: the newest deliveries (of one webhook when given).
    pub async fn webhook_deliveries(
        &self,
        webhook: Option<i64>,
        limit: Option<u32>,
    ) -> Result<Vec<WebhookDelivery>, Error> {
        let call = Call::get(self.team_url(&["webhooks", "deliveries"])?)
            .query("webhook", webhook)
            .query("limit", limit);
        let list: WebhookDeliveryList = self.json(call).await?;
        Ok(list.deliveries)
    }
}
