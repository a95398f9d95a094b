//! An export's and an import's statements, built from the column lists in `tables.rs` in
//! each backend's dialect, so both backends read and write the same columns by construction.
//! Parameter 1 is the team's id and a record's values follow in column order (a team's own row
//! has only its values).

use super::tables::{Children, Column, Table, SQLITE_KEPT_ELSEWHERE};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    Sqlite,
    Postgres,
}

impl Dialect {
    fn param(self, n: usize) -> String {
        match self {
            Dialect::Sqlite => format!("?{n}"),
            Dialect::Postgres => format!("${n}"),
        }
    }

    /// Text ordered byte-wise on both: SQLite's default, PostgreSQL's `C` collation.
    fn order(self, column: Column, alias: &str) -> String {
        match (self, column) {
            (Dialect::Postgres, Column::Text(name)) => format!("{alias}{name} collate \"C\""),
            _ => format!("{alias}{}", column.name()),
        }
    }

    /// What an export selects for `column` of `table`: the column, or on SQLite the expression
    /// reading it where SQLite keeps it (`SQLITE_KEPT_ELSEWHERE`).
    fn read(self, table: &Table, column: &str) -> String {
        let elsewhere = SQLITE_KEPT_ELSEWHERE
            .iter()
            .find(|(t, c, _)| *t == table.name && *c == column);
        match (self, elsewhere) {
            (Dialect::Sqlite, Some((_, _, expr))) => format!("{expr} as {column}"),
            _ => column.to_string(),
        }
    }
}

/// The team's rows of `table` in file order, its children as JSON text under their alias.
pub fn select(table: &Table, dialect: Dialect) -> String {
    let mut columns: Vec<String> = table
        .columns
        .iter()
        .map(|c| dialect.read(table, c))
        .collect();
    if let Some(children) = table.children {
        columns.push(format!(
            "{} as {}",
            children_json(children, dialect),
            children.alias
        ));
    }
    let mut sql = format!(
        "select {} from {} p where p.{} = {}",
        columns.join(", "),
        table.name,
        table.team,
        dialect.param(1)
    );
    if !table.order.is_empty() {
        let order: Vec<String> = table.order.iter().map(|c| dialect.order(*c, "")).collect();
        sql.push_str(&format!(" order by {}", order.join(", ")));
    }
    sql
}

/// A parent row's children as one JSON array of rows (`[]` when it has none).
fn children_json(children: &Children, dialect: Dialect) -> String {
    let row: Vec<String> = children
        .columns
        .iter()
        .map(|c| format!("c.{}", c.name()))
        .collect();
    let row = row.join(", ");
    let order = dialect.order(children.order, "c.");
    let aggregate = match dialect {
        Dialect::Sqlite => format!("json_group_array(json_array({row}) order by {order})"),
        Dialect::Postgres => {
            format!("coalesce(json_agg(json_build_array({row}) order by {order}), '[]')::text")
        }
    };
    let joined: Vec<String> = children
        .keys
        .iter()
        .map(|(child, parent)| format!("c.{child} = p.{parent}"))
        .collect();
    format!(
        "(select {aggregate} from {} c where {})",
        children.name,
        joined.join(" and ")
    )
}

/// One record's row: the team's id (parameter 1) and the record's values. A team's own row
/// gets a new id, and none when the name is taken; a parent row on SQLite answers the keys
/// its children need (`insert_children`); on PostgreSQL it inserts its children too, from
/// the JSON after its values.
pub fn insert(table: &Table, dialect: Dialect) -> String {
    let mut names: Vec<&str> = Vec::new();
    if table.team != "id" {
        names.push(table.team);
    }
    names.extend(table.columns);
    let values: Vec<String> = (1..=names.len()).map(|n| dialect.param(n)).collect();
    let mut sql = format!(
        "insert into {} ({}) values ({})",
        table.name,
        names.join(", "),
        values.join(", ")
    );
    if table.team == "id" {
        sql.push_str(" on conflict (name) do nothing returning id");
    }
    let Some(children) = table.children else {
        return sql;
    };
    let parent_keys: Vec<&str> = children.keys.iter().map(|(_, parent)| *parent).collect();
    sql.push_str(&format!(" returning {}", parent_keys.join(", ")));
    match dialect {
        Dialect::Sqlite => sql,
        Dialect::Postgres => {
            let keys: Vec<String> = parent_keys.iter().map(|k| format!("p.{k}")).collect();
            format!(
                "with p as ({sql}) {}",
                insert_rows(children, dialect, &keys, names.len() + 1)
            )
        }
    }
}

/// SQLite: a parent's children, from the keys its insert answered (parameters 1…) and the JSON
/// rows after them.
pub fn insert_children(children: &Children) -> String {
    let keys: Vec<String> = (1..=children.keys.len())
        .map(|n| Dialect::Sqlite.param(n))
        .collect();
    insert_rows(children, Dialect::Sqlite, &keys, keys.len() + 1)
}

/// `insert into child (keys, columns) select keys, each JSON row's values`.
fn insert_rows(children: &Children, dialect: Dialect, keys: &[String], json: usize) -> String {
    let mut names: Vec<&str> = children.keys.iter().map(|(child, _)| *child).collect();
    names.extend(children.columns.iter().map(|c| c.name()));
    let mut values = keys.to_vec();
    for (i, column) in children.columns.iter().enumerate() {
        values.push(match (dialect, column) {
            (Dialect::Sqlite, _) => format!("value ->> {i}"),
            (Dialect::Postgres, Column::Text(_)) => format!("e ->> {i}"),
            (Dialect::Postgres, Column::Int(_)) => format!("(e ->> {i})::bigint"),
        });
    }
    let rows = match dialect {
        Dialect::Sqlite => format!("json_each({})", dialect.param(json)),
        Dialect::Postgres => format!("p, json_array_elements({}::json) e", dialect.param(json)),
    };
    format!(
        "insert into {} ({}) select {} from {rows}",
        children.name,
        names.join(", "),
        values.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::super::tables::{TASKS, TEAMS, TEST_RUNS};
    use super::*;

    #[test]
    fn a_task_is_read_with_its_blockers_and_written_with_them() {
        assert_eq!(
            select(&TASKS, Dialect::Postgres)
                .split(" from tasks")
                .nth(1),
            Some(" p where p.team_id = $1 order by id collate \"C\"")
        );
        assert!(select(&TASKS, Dialect::Sqlite).contains(
            "(select json_group_array(json_array(c.blocker_id) order by c.blocker_id) \
             from task_deps c where c.team_id = p.team_id and c.task_id = p.id) as blocked_by"
        ));
        let insert = insert(&TASKS, Dialect::Postgres);
        assert!(insert.starts_with("with p as (insert into tasks (team_id, id, prefix"));
        assert!(insert.ends_with(
            "returning team_id, id) insert into task_deps (team_id, task_id, blocker_id) \
             select p.team_id, p.id, e ->> 0 from p, json_array_elements($19::json) e"
        ));
    }

    #[test]
    fn a_run_hands_its_new_id_to_its_outcomes_on_sqlite() {
        assert!(insert(&TEST_RUNS, Dialect::Sqlite).ends_with("?13) returning id"));
        assert_eq!(
            insert_children(TEST_RUNS.children.unwrap()),
            "insert into test_outcomes (run_id, nodeid, outcome) \
             select ?1, value ->> 0, value ->> 1 from json_each(?2)"
        );
    }

    #[test]
    fn a_team_is_inserted_under_a_new_id_unless_its_name_is_taken() {
        assert_eq!(
            insert(&TEAMS, Dialect::Sqlite),
            "insert into teams (name, created_at, msg_seq, event_seq, memory_doc, \
             memory_version) values (?1, ?2, ?3, ?4, ?5, ?6) on conflict (name) do nothing \
             returning id"
        );
        assert_eq!(
            select(&TEAMS, Dialect::Postgres),
            "select name, created_at, msg_seq, event_seq, memory_doc, memory_version \
             from teams p where p.id = $1"
        );
    }

    #[test]
    fn sqlite_exports_a_teams_sequences_from_where_it_keeps_them() {
        assert_eq!(
            select(&TEAMS, Dialect::Sqlite),
            "select name, created_at, \
             (select s.msg_seq from team_seqs s where s.team_id = p.id) as msg_seq, \
             (select s.event_seq from team_seqs s where s.team_id = p.id) as event_seq, \
             memory_doc, memory_version from teams p where p.id = ?1"
        );
    }
}
