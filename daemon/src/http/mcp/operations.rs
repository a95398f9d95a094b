//! Which HTTP operation each tool is, and the function the tool and the operation's handler
//! both call. Input rules (limits, patterns, anything the types do not say) live in that
//! function or below it, never in a handler or a tool alone, so they hold on both surfaces.
//!
//! A table for the tests (`#[cfg(test)]`): they fail when a tool has no entry (or an entry no
//! tool), when an entry names an operation the OpenAPI document lacks, or when a tool that
//! answers as its operation does answers another component; the functions are named by path,
//! so a test build stops when one is renamed or removed. That each limit is refused alike over
//! HTTP and MCP is checked over real requests by `tests/tests/mcp/limits.rs`.

/// One tool at the API's edge.
pub struct Operation {
    /// The MCP tool.
    pub tool: &'static str,
    /// Its HTTP operations' `operationId`s (`history_get` answers for three).
    pub operation_ids: &'static [&'static str],
    /// The functions under `crate::http` that the tool and the handlers call.
    pub through: &'static [&'static str],
}

/// Paths of functions under `crate::http`, as text, compiled as values so each must exist.
macro_rules! through {
    ($($module:ident::$function:ident),+) => {
        &[$({
            let _ = crate::http::$module::$function;
            concat!(stringify!($module), "::", stringify!($function))
        }),+]
    };
}

pub const OPERATIONS: &[Operation] = &[
    Operation {
        tool: "task_create",
        operation_ids: &["createTasks"],
        through: through!(tasks::create_tasks),
    },
    Operation {
        tool: "task_list",
        operation_ids: &["listTasks"],
        through: through!(tasks::list_tasks),
    },
    Operation {
        tool: "task_get",
        operation_ids: &["getTask"],
        through: through!(gate_records::read_task),
    },
    Operation {
        tool: "task_why_not_ready",
        operation_ids: &["whyNotReady"],
        through: through!(task_readiness::reasons),
    },
    Operation {
        tool: "task_update",
        operation_ids: &["updateTask"],
        through: through!(tasks::update_task),
    },
    Operation {
        tool: "task_claim",
        operation_ids: &["claimTasks"],
        through: through!(task_claims::claim_tasks),
    },
    Operation {
        tool: "task_heartbeat",
        operation_ids: &["heartbeatTask"],
        through: through!(task_claims::heartbeat_task),
    },
    Operation {
        tool: "task_release",
        operation_ids: &["releaseTask"],
        through: through!(task_claims::release_task),
    },
    Operation {
        tool: "task_complete",
        operation_ids: &["completeTask"],
        through: through!(task_claims::complete_task),
    },
    Operation {
        tool: "task_fail",
        operation_ids: &["failTask"],
        through: through!(task_claims::fail_task),
    },
    Operation {
        tool: "task_gate",
        operation_ids: &["gateTask"],
        through: through!(gates::gate_task),
    },
    Operation {
        tool: "task_answer",
        operation_ids: &["answerQuestion"],
        through: through!(gates::answer_question),
    },
    Operation {
        tool: "agent_list",
        operation_ids: &["listAgents"],
        through: through!(teams::agents_of),
    },
    Operation {
        tool: "task_ask",
        operation_ids: &["askQuestion"],
        through: through!(holder_questions::ask_question),
    },
    Operation {
        tool: "task_decision",
        operation_ids: &["questionDecision"],
        through: through!(holder_questions::wait_decision),
    },
    Operation {
        tool: "whoami",
        operation_ids: &["whoAmI"],
        through: through!(me::who_am_i),
    },
    Operation {
        tool: "msg_post",
        operation_ids: &["postMessage"],
        through: through!(messages::post_message),
    },
    Operation {
        tool: "msg_list",
        operation_ids: &["listMessages"],
        through: through!(messages::list_messages),
    },
    Operation {
        tool: "msg_search",
        operation_ids: &["searchMessages"],
        through: through!(message_search::search_messages),
    },
    Operation {
        tool: "inbox_read",
        operation_ids: &["readInbox"],
        through: through!(messages::read_inbox),
    },
    Operation {
        tool: "inbox_ack",
        operation_ids: &["ackInbox"],
        through: through!(messages::ack_inbox),
    },
    Operation {
        tool: "history_post",
        operation_ids: &["postTestRun"],
        through: through!(test_history::record_run),
    },
    Operation {
        tool: "history_get",
        operation_ids: &["testHistory", "flakyTests", "testRegressions"],
        through: through!(
            test_history::history_of,
            test_history::flaky_of,
            test_history::regressions_of
        ),
    },
    Operation {
        tool: "memory_get",
        operation_ids: &["getMemory", "getMemoryValue"],
        through: through!(memory::read_memory, memory::read_memory_value),
    },
    Operation {
        tool: "memory_patch",
        operation_ids: &["patchMemory"],
        through: through!(memory::patch_memory),
    },
    Operation {
        tool: "team_msg",
        operation_ids: &[
            "postMessage",
            "listMessages",
            "readInbox",
            "ackInbox",
            "getMemory",
            "patchMemory",
            "listAgents",
        ],
        through: through!(
            messages::post_message,
            messages::post_message_changing_memory,
            messages::list_messages,
            messages::read_inbox,
            messages::ack_inbox,
            memory::read_memory,
            memory::patch_memory,
            teams::agents_of
        ),
    },
    Operation {
        tool: "spend_reserve",
        operation_ids: &["reserveSpend"],
        through: through!(spend::reserve_call),
    },
    Operation {
        tool: "spend_settle",
        operation_ids: &["settleSpend"],
        through: through!(spend::settle_call),
    },
    Operation {
        tool: "spend_report",
        operation_ids: &["spendReport"],
        through: through!(spend::spend_report),
    },
    Operation {
        tool: "budget_get",
        operation_ids: &["getBudget"],
        through: through!(budget::budget_of),
    },
    Operation {
        tool: "budget_set",
        operation_ids: &["putBudget"],
        through: through!(budget::set_budget),
    },
];

#[cfg(test)]
mod tests {
    use super::super::outputs::{output_of, Output};
    use super::super::tools::Huddle;
    use super::*;
    use crate::config::Settings;
    use serde_json::Value;
    use std::collections::BTreeSet;

    /// Each operation of the document by its `operationId`.
    fn operations(doc: &Value) -> Vec<(&str, &Value)> {
        let paths = doc["paths"].as_object().expect("paths");
        paths
            .values()
            .filter_map(Value::as_object)
            .flat_map(|methods| methods.values())
            .filter_map(|op| Some((op["operationId"].as_str()?, op)))
            .collect()
    }

    #[test]
    fn every_tool_is_listed_with_its_operation_and_every_entry_is_a_tool() {
        let tools: BTreeSet<String> = Huddle::tools().map.keys().map(|k| k.to_string()).collect();
        let listed: BTreeSet<String> = OPERATIONS.iter().map(|o| o.tool.to_string()).collect();
        let unlisted: Vec<_> = tools.difference(&listed).collect();
        assert!(
            unlisted.is_empty(),
            "tools without an entry in OPERATIONS: {unlisted:?}; name the HTTP operation and the \
             function both call (extract one beside the handler if it validates inline)"
        );
        let stale: Vec<_> = listed.difference(&tools).collect();
        assert!(stale.is_empty(), "entries without a tool: {stale:?}");
        assert_eq!(listed.len(), OPERATIONS.len(), "a tool listed twice");
    }

    #[test]
    fn every_operation_named_is_in_the_openapi_document() {
        let doc = crate::http::openapi::document(&Settings::default());
        let known: BTreeSet<&str> = operations(&doc).into_iter().map(|(id, _)| id).collect();
        for op in OPERATIONS {
            assert!(!op.through.is_empty(), "{}: no function", op.tool);
            for id in op.operation_ids {
                assert!(known.contains(id), "{}: no operation {id}", op.tool);
            }
        }
    }

    /// The component an operation's success answer is, when it is one (`$ref`).
    fn answered_component(op: &Value) -> Option<&str> {
        let responses = op["responses"].as_object()?;
        let (_, ok) = responses
            .iter()
            .find(|(status, _)| status.starts_with('2'))?;
        let schema = &ok["content"]["application/json"]["schema"];
        schema["$ref"]
            .as_str()?
            .strip_prefix("#/components/schemas/")
    }

    #[test]
    fn a_tool_that_answers_a_component_answers_its_operations_component() {
        let doc = crate::http::openapi::document(&Settings::default());
        let ops = operations(&doc);
        for entry in OPERATIONS {
            let Output::Component(component) = output_of(entry.tool) else {
                continue;
            };
            for id in entry.operation_ids {
                let (_, op) = ops.iter().find(|(known, _)| known == id).expect(id);
                assert_eq!(
                    answered_component(op),
                    Some(component),
                    "{} answers {component}, its operation {id} something else",
                    entry.tool
                );
            }
        }
    }
}
