// The dependency analysis behind the board and the graph: who each task blocks, which of its
// blockers are still unmet, and which tasks can never become ready as things stand because a
// blocker failed or was cancelled, directly or further up the chain.

export const STATUSES = ['pending', 'in_progress', 'completed', 'failed', 'cancelled'];
const DEAD = new Set(['failed', 'cancelled']);

/** Orders `TEST-2` before `TEST-10`. */
export function compareIds(a, b) {
  const [pa, na] = splitId(a);
  const [pb, nb] = splitId(b);
  return pa < pb ? -1 : pa > pb ? 1 : na - nb;
}

function splitId(id) {
  const dash = id.lastIndexOf('-');
  return dash < 0 ? [id, 0] : [id.slice(0, dash), Number(id.slice(dash + 1)) || 0];
}

/**
 * For each task id: `{blocks, unmet, dead}` where `blocks` lists the tasks waiting on it, `unmet`
 * its blockers not completed yet, and `dead` — for a task not finished yet — the chain of ids
 * from it to the failed or cancelled task that keeps it from ever being ready (null if none).
 */
export function analyse(tasks) {
  const info = new Map();
  for (const id of tasks.keys()) info.set(id, { blocks: [], unmet: [], dead: null });
  for (const task of tasks.values()) {
    for (const b of task.blockedBy || []) {
      info.get(b)?.blocks.push(task.id);
      if (tasks.get(b)?.status !== 'completed') info.get(task.id).unmet.push(b);
    }
  }
  for (const i of info.values()) i.blocks.sort(compareIds);

  // Depth-first with memo; `visiting` guards against a cycle the daemon would never store.
  const memo = new Map();
  const visiting = new Set();
  const deadChain = (id) => {
    if (memo.has(id)) return memo.get(id);
    const task = tasks.get(id);
    if (!task || visiting.has(id)) return null;
    if (DEAD.has(task.status)) return [id];
    if (task.status === 'completed') return null;
    visiting.add(id);
    let chain = null;
    for (const b of [...(task.blockedBy || [])].sort(compareIds)) {
      const up = deadChain(b);
      if (up) {
        chain = [id, ...up];
        break;
      }
    }
    visiting.delete(id);
    memo.set(id, chain);
    return chain;
  };
  for (const [id, task] of tasks) {
    if (task.status === 'pending' || task.status === 'in_progress') info.get(id).dead = deadChain(id);
  }
  return info;
}
