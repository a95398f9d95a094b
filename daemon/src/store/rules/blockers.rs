//! Blocker edges and the one cycle search both backends use.
//!
//! A new edge "`task` is blocked by `blocker`" closes a cycle exactly when `blocker` already
//! reaches `task` along `blockedBy` edges. Each backend reads the edges reachable from the new
//! blockers (one recursive query, empty when nothing depends on `task`: then no cycle can
//! close) into a [`BlockerGraph`], and the search runs here, breadth-first with neighbours in
//! id order, so both backends name the same, shortest cycle.

use super::sort_ids;
use crate::store::error::{StoreError, StoreResult};
use huddle_wire::codes;
use std::collections::{HashMap, HashSet};

/// `blockedBy` edges: each task's blockers, in id order.
#[derive(Debug, Default)]
pub struct BlockerGraph {
    blockers: HashMap<String, Vec<String>>,
}

impl BlockerGraph {
    /// From `(task, blocker)` pairs in any order.
    pub fn from_edges(edges: impl IntoIterator<Item = (String, String)>) -> BlockerGraph {
        let mut graph = BlockerGraph::default();
        for (task, blocker) in edges {
            graph.blockers.entry(task).or_default().push(blocker);
        }
        for list in graph.blockers.values_mut() {
            sort_ids(list);
            list.dedup();
        }
        graph
    }

    /// Adds one edge (a batch's edges, as they are accepted).
    pub fn add(&mut self, task: &str, blocker: &str) {
        let list = self.blockers.entry(task.to_string()).or_default();
        if !list.iter().any(|b| b == blocker) {
            list.push(blocker.to_string());
            sort_ids(list);
        }
    }

    /// A shortest path of ids from `from` along `blockedBy` edges to `to` (both included), if
    /// any: breadth-first, neighbours in id order, so the same graph always gives the same path.
    pub fn path(&self, from: &str, to: &str) -> Option<Vec<String>> {
        let mut parent: HashMap<&str, &str> = HashMap::new();
        let mut seen: HashSet<&str> = HashSet::from([from]);
        let mut frontier = vec![from];
        while !frontier.is_empty() {
            if frontier.contains(&to) {
                let mut path = vec![to.to_string()];
                let mut cur = to;
                while let Some(p) = parent.get(cur) {
                    path.push(p.to_string());
                    cur = p;
                }
                path.reverse();
                return Some(path);
            }
            let mut next = Vec::new();
            for node in frontier {
                for blocker in self.blockers.get(node).into_iter().flatten() {
                    if seen.insert(blocker) {
                        parent.insert(blocker, node);
                        next.push(blocker.as_str());
                    }
                }
            }
            frontier = next;
        }
        None
    }

    /// Every task from which `to` can be reached along `blockedBy` edges (`to` included).
    pub fn reaching(&self, to: &str) -> HashSet<&str> {
        let mut dependents: HashMap<&str, Vec<&str>> = HashMap::new();
        for (task, blockers) in &self.blockers {
            for blocker in blockers {
                dependents.entry(blocker).or_default().push(task);
            }
        }
        let mut seen: HashSet<&str> = HashSet::new();
        let mut stack = Vec::new();
        if let Some((key, _)) = dependents.get_key_value(to) {
            seen.insert(key);
            stack.push(*key);
        }
        while let Some(node) = stack.pop() {
            for dependent in dependents.get(node).into_iter().flatten() {
                if seen.insert(dependent) {
                    stack.push(dependent);
                }
            }
        }
        seen
    }

    /// The cycles of a whole graph (an import's, where walking once per edge would cost edges
    /// times the graph): at most `max` of them, each as the error adding its closing edge
    /// gets, so a file is refused with the words an API call would get. One depth-first walk,
    /// tasks and blockers in id order, so the same graph always names the same cycles.
    pub fn cycles(&self, max: usize) -> Vec<StoreError> {
        #[derive(Clone, Copy, PartialEq)]
        enum Mark {
            OnPath,
            Done,
        }
        let mut marks: HashMap<&str, Mark> = HashMap::new();
        let mut found = Vec::new();
        let mut roots: Vec<String> = self.blockers.keys().cloned().collect();
        sort_ids(&mut roots);
        for root in &roots {
            let Some((root, _)) = self.blockers.get_key_value(root) else {
                continue;
            };
            if marks.contains_key(root.as_str()) {
                continue;
            }
            // Each frame: a task and how many of its blockers were visited.
            let mut stack: Vec<(&str, usize)> = vec![(root.as_str(), 0)];
            marks.insert(root.as_str(), Mark::OnPath);
            while let Some((task, next)) = stack.last_mut() {
                let task: &str = task;
                let blockers = self.blockers.get(task).map(Vec::as_slice).unwrap_or(&[]);
                let Some(blocker) = blockers.get(*next) else {
                    marks.insert(task, Mark::Done);
                    stack.pop();
                    continue;
                };
                *next += 1;
                match marks.get(blocker.as_str()) {
                    Some(Mark::Done) => {}
                    Some(Mark::OnPath) => {
                        let path = self.path(blocker, task).unwrap_or_default();
                        found.push(dependency_cycle(task, blocker, path));
                        if found.len() >= max {
                            return found;
                        }
                    }
                    None => {
                        marks.insert(blocker.as_str(), Mark::OnPath);
                        stack.push((blocker.as_str(), 0));
                    }
                }
            }
        }
        found
    }

    /// The error for adding `blocker` to `task` if that closes a cycle.
    pub fn check_acyclic(&self, task: &str, blocker: &str) -> StoreResult<()> {
        match self.path(blocker, task) {
            Some(path) => Err(dependency_cycle(task, blocker, path)),
            None => Ok(()),
        }
    }
}

/// Checks `blockers` for `task` in order, as if added one by one: self-blocking and unknown
/// blockers are refused (400), a cycle is refused naming it (409). `graph` holds the edges
/// reachable from the blockers (edges added before in the same change cannot reach `task`
/// unless the stored ones do). One walk back from `task` finds every blocker that reaches it,
/// so a patch of a hundred blockers walks the graph once, not once per blocker.
pub fn check_blockers(
    task: &str,
    blockers: &[String],
    known: impl Fn(&str) -> bool,
    graph: &BlockerGraph,
    field: &str,
) -> StoreResult<()> {
    let reaching = graph.reaching(task);
    for blocker in blockers {
        if blocker == task {
            return Err(self_blocking(task, field));
        }
        if !known(blocker) {
            return Err(unknown_blocker(blocker, field));
        }
        if reaching.contains(blocker.as_str()) {
            graph.check_acyclic(task, blocker)?;
        }
    }
    Ok(())
}

/// The edges a blocker check may read: `[limits] max_dependency_walk`. Past it the change is
/// refused (413) rather than walked: two "ladders" of a hundred tasks per level, each blocked
/// by the whole level before, made one patch walk a million edges inside the shared writer.
pub fn walk_too_large(task: &str, budget: usize) -> StoreError {
    StoreError::TooLarge {
        message: format!(
            "checking the new blockers of {task} for a cycle would read more than {budget} blockedBy edges ([limits] max_dependency_walk); add blockers to tasks nearer the top of the graph, or split the graph"
        ),
    }
}

pub fn self_blocking(task: &str, field: &str) -> StoreError {
    StoreError::invalid(field, format!("task {task} cannot block itself"))
}

pub fn unknown_blocker(blocker: &str, field: &str) -> StoreError {
    StoreError::Invalid {
        field: field.to_string(),
        message: format!("unknown blocker task {blocker}"),
        details: serde_json::json!({ "unknownTask": blocker }),
    }
}

/// `path` runs from `blocker` along `blockedBy` edges to `task`.
pub fn dependency_cycle(task: &str, blocker: &str, path: Vec<String>) -> StoreError {
    let mut names = vec![task.to_string()];
    names.extend(path);
    StoreError::Conflict {
        code: codes::DEPENDENCY_CYCLE,
        message: format!(
            "adding {blocker} as a blocker of {task} would close a cycle: {}",
            names.join(" → ")
        ),
        details: serde_json::json!({ "cycle": names }),
    }
}

#[cfg(test)]
mod tests {
    use super::BlockerGraph;

    fn graph(edges: &[(&str, &str)]) -> BlockerGraph {
        BlockerGraph::from_edges(edges.iter().map(|(t, b)| (t.to_string(), b.to_string())))
    }

    fn ids(names: &[&str]) -> Option<Vec<String>> {
        Some(names.iter().map(|n| n.to_string()).collect())
    }

    #[test]
    fn a_path_runs_from_the_blocker_along_blocked_by_edges_to_the_task() {
        // C is blocked by B, B by A.
        let g = graph(&[("C", "B"), ("B", "A")]);
        assert_eq!(g.path("C", "A"), ids(&["C", "B", "A"]));
        assert_eq!(g.path("A", "C"), None);
        assert_eq!(g.path("B", "B"), ids(&["B"]));
    }

    #[test]
    fn a_diamond_names_the_first_branch_in_id_order_whatever_the_edge_order() {
        // D is blocked by B and C, both blocked by A; edges given in both orders.
        let forward = graph(&[("D", "T-2"), ("D", "T-10"), ("T-2", "A"), ("T-10", "A")]);
        let backward = graph(&[("T-10", "A"), ("T-2", "A"), ("D", "T-10"), ("D", "T-2")]);
        assert_eq!(forward.path("D", "A"), ids(&["D", "T-2", "A"]));
        assert_eq!(backward.path("D", "A"), forward.path("D", "A"));
    }

    #[test]
    fn the_shortest_path_wins_over_a_longer_one_listed_first() {
        // D reaches A through B → C → A and straight through Z → A.
        let g = graph(&[("D", "B"), ("B", "C"), ("C", "A"), ("D", "Z"), ("Z", "A")]);
        assert_eq!(g.path("D", "A"), ids(&["D", "Z", "A"]));
    }

    #[test]
    fn a_whole_graph_names_each_cycle_as_adding_its_last_edge_would() {
        // A → B → C → A, and D blocked by itself through E; F hangs off the first cycle.
        let g = graph(&[
            ("A", "B"),
            ("B", "C"),
            ("C", "A"),
            ("D", "E"),
            ("E", "D"),
            ("F", "A"),
        ]);
        let cycles: Vec<String> = g.cycles(10).iter().map(|e| e.to_string()).collect();
        assert_eq!(cycles.len(), 2, "{cycles:?}");
        assert!(cycles[0].contains("C → A → B → C"), "{cycles:?}");
        assert!(cycles[1].contains("E → D → E"), "{cycles:?}");
        assert_eq!(g.cycles(1).len(), 1, "the list is bounded");
        assert!(graph(&[("A", "B"), ("B", "C"), ("A", "C")])
            .cycles(10)
            .is_empty());
    }

    #[test]
    fn a_long_chain_is_walked_to_its_end() {
        let names: Vec<String> = (0..5000).map(|i| format!("T-{i}")).collect();
        let mut g = BlockerGraph::default();
        for pair in names.windows(2) {
            g.add(&pair[1], &pair[0]);
        }
        let path = g
            .path("T-4999", "T-0")
            .expect("the chain connects its ends");
        assert_eq!(path.len(), 5000);
        assert_eq!(path.first().map(String::as_str), Some("T-4999"));
        assert_eq!(path.last().map(String::as_str), Some("T-0"));
        assert!(g.check_acyclic("T-0", "T-4999").is_err());
        let reaching = g.reaching("T-0");
        assert_eq!(reaching.len(), 5000, "every link reaches the chain's start");
        assert!(
            g.reaching("T-4999").is_empty(),
            "nothing depends on the end"
        );
        assert!(g.check_acyclic("T-4999", "T-0").is_ok());
    }
}
