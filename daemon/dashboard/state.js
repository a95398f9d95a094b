// The dashboard's model of one team, fed by the API and both streams; views subscribe to the
// topics they draw ('tasks', 'messages', 'agents', 'memory', 'progress', 'connection').

/** Messages kept for the log; older ones drop off (the chart keeps its points separately). */
export const MESSAGES_KEPT = 5000;
/** Points kept per task for the pass-rate chart. */
const POINTS_KEPT = 500;

export function createState() {
  const listeners = new Map();
  const taskWatchers = new Set();
  const pending = new Set();
  let flushQueued = false;

  const state = {
    /** id → task, the latest version seen. */
    tasks: new Map(),
    /** Oldest first. */
    messages: [],
    /** How many messages the team has in all (the snapshot's count, then one per new message). */
    messageTotal: null,
    /** name → {name, role, lastSeenAt, revoked} */
    agents: new Map(),
    memory: null,
    history: [],
    /** The test history (`GET /history`): `{project, projects, runs, passRateChange}` or null. */
    testHistory: null,
    /** taskId → [{seq, iteration, passRate, kind, at, strategy, gate}] in message order. */
    progress: new Map(),
    /** Tasks with new points since the Pass-rate view last looked (it empties this). */
    progressChanged: [],
    /** stream name → 'connecting' | 'live' | 'retrying' */
    connection: {},

    on(topic, fn) {
      if (!listeners.has(topic)) listeners.set(topic, new Set());
      listeners.get(topic).add(fn);
    },

    /** Tells the topic's views, once per animation frame however many changes came. */
    changed(topic) {
      pending.add(topic);
      if (flushQueued) return;
      flushQueued = true;
      requestAnimationFrame(() => {
        flushQueued = false;
        const topics = [...pending];
        pending.clear();
        for (const t of topics) for (const fn of listeners.get(t) || []) fn();
      });
    },

    /** `fn(task)` for each task stored, as it comes: for views that keep up one task at a time. */
    onTask(fn) {
      taskWatchers.add(fn);
    },

    putTask(task) {
      const known = state.tasks.get(task.id);
      if (known && known.version > task.version) return;
      state.tasks.set(task.id, task);
      for (const fn of taskWatchers) fn(task);
      state.changed('tasks');
    },

    /** The newest page of the log, oldest first, before the stream follows on. */
    loadMessages(messages) {
      for (const m of messages) state.addMessage(m);
    },

    addMessage(message) {
      const last = state.messages[state.messages.length - 1];
      if (last && last.seq >= message.seq) return; // a replay after a reconnect
      state.messages.push(message);
      if (state.messageTotal != null) state.messageTotal += 1;
      if (state.messages.length > MESSAGES_KEPT) state.messages.splice(0, state.messages.length - MESSAGES_KEPT);
      state.changed('messages');
      const agent = state.agents.get(message.from);
      if (agent && !(Date.parse(agent.lastSeenAt) >= Date.parse(message.createdAt))) {
        agent.lastSeenAt = message.createdAt;
        state.changed('agents');
      }
      if (notePoint(message)) state.changed('progress');
    },

    setAgents(list) {
      for (const a of list) {
        const known = state.agents.get(a.name);
        state.agents.set(a.name, { ...known, ...a, revoked: known?.revoked ?? false });
      }
      state.changed('agents');
    },

    agentEvent(kind, agent) {
      const known = state.agents.get(agent.name) || {};
      state.agents.set(agent.name, {
        ...known,
        name: agent.name,
        role: agent.role,
        lastSeenAt: known.lastSeenAt ?? agent.lastSeenAt ?? null,
        revoked: kind === 'agent.revoked' ? true : kind === 'agent.created' || kind === 'agent.rotated' ? false : known.revoked,
      });
      state.changed('agents');
    },

    setMemory(memory, history) {
      state.memory = memory;
      state.history = history;
      state.changed('memory');
    },

    /** Older pass-rate points from a search (the Pass-rate view's backfill), not log rows. */
    backfillPoints(messages) {
      let any = false;
      for (const m of messages) if (notePoint(m)) any = true;
      if (any) state.changed('progress');
    },

    /** The test history belongs to the pass-rate view. */
    setTestHistory(history) {
      state.testHistory = history;
      state.changed('progress');
    },

    /** Why a stream is refused ('limited'), by stream name. */
    connectionNotes: {},

    setConnection(stream, status, note) {
      state.connection[stream] = status;
      if (note) state.connectionNotes[stream] = note;
      else delete state.connectionNotes[stream];
      state.changed('connection');
    },
  };

  // A pass-rate point from `impl_progress` (an iteration of a fix cycle) or `test_result` (the
  // run's outcome after `iterations` iterations). Anything malformed is not a point.
  function notePoint(m) {
    if (m.type !== 'impl_progress' && m.type !== 'test_result') return false;
    const d = m.data || {};
    const taskId = typeof d.taskId === 'string' ? d.taskId : null;
    const rate = d.passRate;
    if (!taskId || typeof rate !== 'number' || !Number.isFinite(rate)) return false;
    const iteration = m.type === 'impl_progress' ? d.iteration : d.iterations;
    if (typeof iteration !== 'number' || !Number.isFinite(iteration)) return false;
    const points = state.progress.get(taskId) || [];
    if (points.some((p) => p.seq === m.seq)) return false; // loaded twice (a backfill)
    // In seq order, whatever order they arrive in (a backfill brings older ones later).
    let at = points.length;
    while (at > 0 && points[at - 1].seq > m.seq) at -= 1;
    points.splice(at, 0, {
      seq: m.seq,
      kind: m.type,
      iteration,
      passRate: Math.min(100, Math.max(0, rate)),
      at: m.createdAt,
      strategy: typeof d.strategy === 'string' ? d.strategy : null,
      gate: typeof d.qualityGatePassed === 'boolean' ? d.qualityGatePassed : null,
      maxIterations: typeof d.maxIterations === 'number' ? d.maxIterations : null,
    });
    if (points.length > POINTS_KEPT) points.splice(0, points.length - POINTS_KEPT);
    state.progress.set(taskId, points);
    if (!state.progressChanged.includes(taskId)) state.progressChanged.push(taskId);
    return true;
  }

  return state;
}
