//! A row of an exported table as its record, and a record as the values its row is written
//! with, in its table's column order (`tables.rs`): the one mapping both backends share.

use super::super::rules::task_event;
use super::tables::{self, Table};
use super::*;
use serde::de::DeserializeOwned;

/// A row as an export reads it, by column name: every exported column is a bigint or text.
pub trait StoredRow {
    fn opt_int(&self, column: &str) -> StoreResult<Option<i64>>;
    fn opt_text(&self, column: &str) -> StoreResult<Option<String>>;

    fn int(&self, column: &str) -> StoreResult<i64> {
        self.opt_int(column)?.ok_or_else(|| null(column))
    }

    fn text(&self, column: &str) -> StoreResult<String> {
        self.opt_text(column)?.ok_or_else(|| null(column))
    }

    fn json(&self, column: &str) -> StoreResult<Json> {
        json_of(&self.text(column)?)
    }

    fn opt_json(&self, column: &str) -> StoreResult<Option<Json>> {
        self.opt_text(column)?.as_deref().map(json_of).transpose()
    }
}

fn null(column: &str) -> StoreError {
    StoreError::Internal(format!("stored {column} is null"))
}

/// A parent's children as its select gives them: a JSON array of rows.
fn children<T: DeserializeOwned>(row: &dyn StoredRow, alias: &str) -> StoreResult<Vec<T>> {
    serde_json::from_str(&row.text(alias)?)
        .map_err(|e| StoreError::Internal(format!("stored {alias}: {e}")))
}

/// A value an import binds: a bigint or text, either possibly null.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cell<'a> {
    Int(Option<i64>),
    Text(Option<&'a str>),
}

impl From<i64> for Cell<'_> {
    fn from(v: i64) -> Self {
        Cell::Int(Some(v))
    }
}

impl From<Option<i64>> for Cell<'_> {
    fn from(v: Option<i64>) -> Self {
        Cell::Int(v)
    }
}

impl<'a> From<&'a str> for Cell<'a> {
    fn from(v: &'a str) -> Self {
        Cell::Text(Some(v))
    }
}

impl<'a> From<Option<&'a str>> for Cell<'a> {
    fn from(v: Option<&'a str>) -> Self {
        Cell::Text(v)
    }
}

/// One row of `table` as its record.
pub fn read(table: &Table, r: &dyn StoredRow) -> StoreResult<Record> {
    Ok(match table.kind {
        "team" => Record::Team(TeamRecord {
            name: r.text("name")?,
            created_at: r.int("created_at")?,
            msg_seq: r.int("msg_seq")?,
            event_seq: r.int("event_seq")?,
            memory: r.json("memory_doc")?,
            memory_version: r.int("memory_version")?,
        }),
        "agent" => {
            let role = r.text("role")?;
            Record::Agent(AgentRecord {
                name: r.text("name")?,
                role: role
                    .parse()
                    .map_err(|_| StoreError::Internal(format!("stored role {role}")))?,
                token_hash: r.text("token_hash")?,
                created_at: r.int("created_at")?,
                last_seen_at: r.opt_int("last_seen_at")?,
                inbox_cursor: r.int("inbox_cursor")?,
                revoked_at: r.opt_int("revoked_at")?,
            })
        }
        "counter" => Record::Counter(CounterRecord {
            prefix: r.text("prefix")?,
            next_number: r.int("next_number")?,
        }),
        "task" => {
            let (status, claimed_by) =
                exported_claim(&r.text("status")?, r.opt_text("claimed_by")?)?;
            let blockers: Vec<(String,)> = children(r, tables::TASK_DEPS.alias)?;
            Record::Task(TaskRecord {
                id: r.text("id")?,
                prefix: r.text("prefix")?,
                number: r.int("number")?,
                subject: r.text("subject")?,
                description: r.text("description")?,
                active_form: r.opt_text("active_form")?,
                status,
                owner: r.opt_text("owner")?,
                claimed_by,
                attempts: r.int("attempts")?,
                max_attempts: r.int("max_attempts")?,
                metadata: r.json("metadata")?,
                result: r.opt_json("result")?,
                failure_reason: r.opt_text("failure_reason")?,
                version: r.int("version")?,
                created_at: r.int("created_at")?,
                updated_at: r.int("updated_at")?,
                blocked_by: blockers.into_iter().map(|(id,)| id).collect(),
            })
        }
        "message" => Record::Message(MessageRecord {
            seq: r.int("seq")?,
            id: r.text("id")?,
            from: r.text("sender")?,
            to: r.text("recipient")?,
            kind: r.text("type")?,
            summary: r.text("summary")?,
            data: r.json("data")?,
            created_at: r.int("created_at")?,
        }),
        "idempotency_key" => Record::IdempotencyKey(KeyRecord {
            agent: r.text("agent")?,
            key: r.text("key")?,
            seq: r.int("seq")?,
        }),
        "event" => {
            // A task event's data as the API shows it, however this store keeps it.
            let kind = r.text("type")?;
            let data = json_of(&task_event::expanded(&kind, &r.text("data")?))?;
            Record::Event(EventRecord {
                seq: r.int("seq")?,
                kind,
                data,
                created_at: r.int("created_at")?,
            })
        }
        "memory_change" => Record::MemoryChange(MemoryChangeRecord {
            version: r.int("version")?,
            agent: r.text("agent")?,
            kind: r.text("kind")?,
            patch: r.json("patch")?,
            created_at: r.int("created_at")?,
        }),
        "test_run" => Record::TestRun(TestRunRecord {
            project: r.text("project")?,
            tree: r.text("tree")?,
            agent: r.text("agent")?,
            started_at: r.int("started_at")?,
            created_at: r.int("created_at")?,
            passed: r.int("passed")?,
            failed: r.int("failed")?,
            skipped: r.int("skipped")?,
            errors: r.int("errors")?,
            outcomes: children(r, tables::TEST_OUTCOMES.alias)?,
            tier: r.opt_text("tier")?,
            task: r.opt_text("task")?,
            artifacts: r.opt_text("artifacts")?,
        }),
        "webhook" => Record::Webhook(WebhookRecord {
            url: r.text("url")?,
            secret: r.text("secret")?,
            events: r.json("events")?,
            created_by: r.text("created_by")?,
            created_at: r.int("created_at")?,
            message_cursor: r.int("message_cursor")?,
            event_cursor: r.int("event_cursor")?,
        }),
        "settings" => Record::Settings(SettingsRecord {
            max_tasks: r.opt_int("max_tasks")?,
            max_edges: r.opt_int("max_edges")?,
            max_messages: r.opt_int("max_messages")?,
            max_storage_bytes: r.opt_int("max_storage_bytes")?,
            retention: r.json("retention")?,
            questions: r.json("questions")?,
        }),
        other => return Err(StoreError::Internal(format!("no table of kind {other}"))),
    })
}

impl Record {
    /// The table the record is a row of; none for the `end`.
    pub fn table(&self) -> Option<&'static Table> {
        Some(match self {
            Record::Team(_) => &tables::TEAMS,
            Record::Agent(_) => &tables::AGENTS,
            Record::Counter(_) => &tables::TASK_COUNTERS,
            Record::Task(_) => &tables::TASKS,
            Record::Message(_) => &tables::MESSAGES,
            Record::IdempotencyKey(_) => &tables::IDEMPOTENCY_KEYS,
            Record::Event(_) => &tables::EVENTS,
            Record::MemoryChange(_) => &tables::MEMORY_HISTORY,
            Record::TestRun(_) => &tables::TEST_RUNS,
            Record::Webhook(_) => &tables::WEBHOOKS,
            Record::Settings(_) => &tables::TEAM_SETTINGS,
            Record::End(_) => return None,
        })
    }

    /// The record's values, each with its column, in its table's column order.
    pub fn cells(&self) -> Vec<(&'static str, Cell<'_>)> {
        match self {
            Record::Team(t) => vec![
                ("name", t.name.as_str().into()),
                ("created_at", t.created_at.into()),
                ("msg_seq", t.msg_seq.into()),
                ("event_seq", t.event_seq.into()),
                ("memory_doc", t.memory.get().into()),
                ("memory_version", t.memory_version.into()),
            ],
            Record::Agent(a) => vec![
                ("name", a.name.as_str().into()),
                ("role", a.role.as_str().into()),
                ("token_hash", a.token_hash.as_str().into()),
                ("created_at", a.created_at.into()),
                ("last_seen_at", a.last_seen_at.into()),
                ("inbox_cursor", a.inbox_cursor.into()),
                ("revoked_at", a.revoked_at.into()),
            ],
            Record::Counter(c) => vec![
                ("prefix", c.prefix.as_str().into()),
                ("next_number", c.next_number.into()),
            ],
            Record::Task(t) => vec![
                ("id", t.id.as_str().into()),
                ("prefix", t.prefix.as_str().into()),
                ("number", t.number.into()),
                ("subject", t.subject.as_str().into()),
                ("description", t.description.as_str().into()),
                ("active_form", t.active_form.as_deref().into()),
                ("status", t.status.as_str().into()),
                ("owner", t.owner.as_deref().into()),
                ("claimed_by", t.claimed_by.as_deref().into()),
                ("attempts", t.attempts.into()),
                ("max_attempts", t.max_attempts.into()),
                ("metadata", t.metadata.get().into()),
                ("result", t.result.as_ref().map(|r| r.get()).into()),
                ("failure_reason", t.failure_reason.as_deref().into()),
                ("version", t.version.into()),
                ("created_at", t.created_at.into()),
                ("updated_at", t.updated_at.into()),
            ],
            Record::Message(m) => vec![
                ("seq", m.seq.into()),
                ("id", m.id.as_str().into()),
                ("sender", m.from.as_str().into()),
                ("recipient", m.to.as_str().into()),
                ("type", m.kind.as_str().into()),
                ("summary", m.summary.as_str().into()),
                ("data", m.data.get().into()),
                ("created_at", m.created_at.into()),
            ],
            Record::IdempotencyKey(k) => vec![
                ("agent", k.agent.as_str().into()),
                ("key", k.key.as_str().into()),
                ("seq", k.seq.into()),
            ],
            Record::Event(e) => vec![
                ("seq", e.seq.into()),
                ("type", e.kind.as_str().into()),
                ("data", e.data.get().into()),
                ("created_at", e.created_at.into()),
            ],
            Record::MemoryChange(h) => vec![
                ("version", h.version.into()),
                ("agent", h.agent.as_str().into()),
                ("kind", h.kind.as_str().into()),
                ("patch", h.patch.get().into()),
                ("created_at", h.created_at.into()),
            ],
            Record::TestRun(r) => vec![
                ("project", r.project.as_str().into()),
                ("tree", r.tree.as_str().into()),
                ("agent", r.agent.as_str().into()),
                ("started_at", r.started_at.into()),
                ("created_at", r.created_at.into()),
                ("passed", r.passed.into()),
                ("failed", r.failed.into()),
                ("skipped", r.skipped.into()),
                ("errors", r.errors.into()),
                ("tier", r.tier.as_deref().into()),
                ("task", r.task.as_deref().into()),
                ("artifacts", r.artifacts.as_deref().into()),
            ],
            Record::Webhook(w) => vec![
                ("url", w.url.as_str().into()),
                ("secret", w.secret.as_str().into()),
                ("events", w.events.get().into()),
                ("created_by", w.created_by.as_str().into()),
                ("created_at", w.created_at.into()),
                ("message_cursor", w.message_cursor.into()),
                ("event_cursor", w.event_cursor.into()),
            ],
            Record::Settings(s) => vec![
                ("max_tasks", s.max_tasks.into()),
                ("max_edges", s.max_edges.into()),
                ("max_messages", s.max_messages.into()),
                ("max_storage_bytes", s.max_storage_bytes.into()),
                ("retention", s.retention.get().into()),
                ("questions", s.questions.get().into()),
            ],
            Record::End(_) => Vec::new(),
        }
    }

    /// The rows of its table's children (`tables::Children`) as JSON, for a task or a run.
    pub fn children_json(&self) -> Option<String> {
        let rows = match self {
            Record::Task(t) => {
                serde_json::to_string(&t.blocked_by.iter().map(|id| (id,)).collect::<Vec<_>>())
            }
            Record::TestRun(r) => serde_json::to_string(&r.outcomes),
            _ => return None,
        };
        Some(rows.expect("strings and numbers are JSON"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One line of each kind, as an export writes it.
    const LINES: [&str; 11] = [
        r#"{"kind":"team","version":1,"name":"qa","createdAt":1,"msgSeq":2,"eventSeq":3,"memory":{},"memoryVersion":4}"#,
        r#"{"kind":"agent","version":1,"name":"a","role":"tester","tokenHash":"h","createdAt":1,"lastSeenAt":null,"inboxCursor":0,"revokedAt":null}"#,
        r#"{"kind":"counter","version":1,"prefix":"TEST","nextNumber":2}"#,
        r#"{"kind":"task","version":1,"id":"TEST-002","prefix":"TEST","number":2,"subject":"s","description":"","activeForm":null,"status":"pending","owner":null,"claimedBy":null,"attempts":0,"maxAttempts":2,"metadata":{},"result":null,"failureReason":null,"taskVersion":1,"createdAt":1,"updatedAt":1,"blockedBy":["TEST-001"]}"#,
        r#"{"kind":"message","version":1,"seq":1,"id":"m","from":"a","to":"*","type":"t","summary":"s","data":{},"createdAt":1}"#,
        r#"{"kind":"idempotency_key","version":1,"agent":"a","key":"k","seq":1}"#,
        r#"{"kind":"event","version":1,"seq":1,"type":"task.created","data":{},"createdAt":1}"#,
        r#"{"kind":"memory_change","version":1,"memoryVersion":1,"agent":"a","type":"patch","patch":{},"createdAt":1}"#,
        r#"{"kind":"test_run","version":1,"project":"p","tree":"t","agent":"a","startedAt":1,"createdAt":1,"passed":1,"failed":0,"skipped":0,"errors":0,"outcomes":[["a",0]]}"#,
        r#"{"kind":"webhook","version":1,"url":"u","secret":"s","events":[],"createdBy":"a","createdAt":1,"messageCursor":0,"eventCursor":0}"#,
        r#"{"kind":"settings","version":1,"maxTasks":null,"maxEdges":null,"maxMessages":null,"maxStorageBytes":null,"retention":{},"questions":{}}"#,
    ];

    #[test]
    fn every_record_writes_its_tables_columns_in_order() {
        for (line, table) in LINES.iter().zip(tables::EXPORTED) {
            let record = Record::parse(line).unwrap();
            assert_eq!(record.kind(), table.kind);
            assert_eq!(record.table().unwrap().name, table.name, "{line}");
            let names: Vec<&str> = record.cells().iter().map(|(name, _)| *name).collect();
            assert_eq!(names, table.columns, "{}", table.kind);
        }
    }

    #[test]
    fn children_travel_as_json_rows() {
        let task = Record::parse(LINES[3]).unwrap();
        assert_eq!(task.children_json().unwrap(), r#"[["TEST-001"]]"#);
        let run = Record::parse(LINES[8]).unwrap();
        assert_eq!(run.children_json().unwrap(), r#"[["a",0]]"#);
    }
}
