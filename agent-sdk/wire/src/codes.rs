//! The `code` of every error the API answers (`{"error": {"code", …}}`), defined once for the
//! daemon that sends them and the clients that match on them. The HTTP status is given for
//! each; the codes never change meaning.

/// 400: a field is wrong; `details.field` names it.
pub const INVALID_FIELD: &str = "invalid_field";
/// 400: the body is not JSON.
pub const INVALID_JSON: &str = "invalid_json";
/// 400: the body is JSON of the wrong shape.
pub const INVALID_BODY: &str = "invalid_body";
/// 400: a query parameter is wrong.
pub const INVALID_QUERY: &str = "invalid_query";
/// 401: no token, or one that is unknown or revoked.
pub const UNAUTHORIZED: &str = "unauthorized";
/// 403: the caller's role may not do this.
pub const FORBIDDEN: &str = "forbidden";
/// 403: a gate asked with `personOnly` is decided by a person (`lead`) only.
pub const PERSON_REQUIRED: &str = "person_required";
/// 404: no such team, task, agent, route or memory pointer (also another team's).
pub const NOT_FOUND: &str = "not_found";
/// 405: the route does not take that method.
pub const METHOD_NOT_ALLOWED: &str = "method_not_allowed";
/// 409: a team with that name exists.
pub const DUPLICATE_TEAM: &str = "duplicate_team";
/// 409: an agent with that name exists in the team.
pub const DUPLICATE_AGENT: &str = "duplicate_agent";
/// 409: a task with that id exists.
pub const DUPLICATE_ID: &str = "duplicate_id";
/// 409: the edge would close a cycle; `details.cycle` names it.
pub const DEPENDENCY_CYCLE: &str = "dependency_cycle";
/// 409: the team has as many agents as `[limits] max_agents_per_team` allows.
pub const TEAM_LIMIT: &str = "team_limit";
/// 409: the write would take the team past a quota (`[limits] max_*_per_team`, or the team's
/// override); `details` names the `quota`, its `limit`, the team's current `used` and what the
/// request would `add`. Nothing of the request was stored.
pub const TEAM_QUOTA: &str = "team_quota";
/// 409: the team's model budget (`/v1/teams/{team}/budget`) is spent, or the task's ceiling:
/// a model call is not reserved, or a claim of model-calling tasks takes nothing; `details`
/// names the `scope` (`team` or `task`), the `limit` reached (`tokens` or `cost`), its value
/// and what was `spent`. Raise the budget (or wait for the next day) and try again.
pub const BUDGET_EXCEEDED: &str = "budget_exceeded";
/// 409: the spend call was settled already (its tokens are counted once).
pub const ALREADY_SETTLED: &str = "already_settled";
/// 409: the task is not held by the caller.
pub const NOT_HOLDER: &str = "not_holder";
/// 409: the task requires evidence (its metadata's `requireEvidence`, or the daemon's
/// `[tasks] evidence_prefixes`) and the completion's `result.evidence` names no test run.
pub const EVIDENCE_REQUIRED: &str = "evidence_required";
/// 409: the test run `result.evidence` names does not prove the completion: not in the team's
/// history, posted by another agent or for another task, on another tree, below the gate, or a
/// target test not passing. `details` says which.
pub const EVIDENCE_MISMATCH: &str = "evidence_mismatch";
/// 409: a status set by hand would strand the task (`in_progress` without a claim).
pub const INVALID_TRANSITION: &str = "invalid_transition";
/// 409: the task waits for blockers that are not completed; `details.blockedBy` names them.
pub const BLOCKED: &str = "blocked";
/// 409: the task is completed, failed or cancelled.
pub const TASK_CLOSED: &str = "task_closed";
/// 412: `If-Match` named an older version.
pub const STALE_VERSION: &str = "stale_version";
/// 413: the body or a value is over its limit.
pub const TOO_LARGE: &str = "too_large";
/// 429: too many requests; `Retry-After` says when to try again.
pub const RATE_LIMITED: &str = "rate_limited";
/// 429: the agent has as many open streams as allowed.
pub const TOO_MANY_STREAMS: &str = "too_many_streams";
/// 500: a bug; the details are in the daemon's log only.
pub const INTERNAL: &str = "internal";
/// 503 with `Retry-After`: the database cannot answer or take writes now (unreachable, disk
/// full, read-only).
pub const STORE_UNAVAILABLE: &str = "store_unavailable";
/// 503 with `Retry-After`: the team's reads hold its whole share of the read connections
/// (`[limits] max_reads_per_team`) and none came free in time; other teams are unaffected.
pub const TEAM_READS_BUSY: &str = "team_reads_busy";
/// 431: the request head (request line and headers) is larger than the daemon accepts.
pub const HEAD_TOO_LARGE: &str = "head_too_large";
/// 503: the daemon has as many connections open as it accepts; retry after `Retry-After`.
pub const TOO_MANY_CONNECTIONS: &str = "too_many_connections";
