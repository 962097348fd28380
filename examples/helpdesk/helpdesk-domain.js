// helpdesk-domain.js — a Weft domain written from scratch: open a helpdesk ticket with the right
// team, then tell the requester. Run it with `npx weft run ./helpdesk-domain.js`.
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { defineDomain, htn, ScriptedModel, z } from 'weft';

const { LibraryBuilder, and, atom, not, add } = htn;

// 1. The method library: the only plans the HTN engine may derive. Each invocation pins its digest.
const library = new LibraryBuilder('helpdesk')
  .type('team')
  .type('person')
  .predicate('has-queue', { '?team': 'team' })
  .predicate('reachable', { '?p': 'person' })
  .predicate('filed', { '?team': 'team', '?p': 'person' })
  .predicate('told', { '?p': 'person', '?team': 'team' })
  .task('open_ticket', { '?team': 'team', '?p': 'person', '?severity': 'number' })
  .operator('file_ticket', {
    params: { '?team': 'team', '?p': 'person', '?severity': 'number' },
    precondition: and(atom('has-queue', '?team'), not(atom('filed', '?team', '?p'))),
    effect: add('filed', '?team', '?p'),
    actuator: { actuator: 'tickets.create', args: { team: '?team', requester: '?p', severity: '?severity' } },
  })
  .operator('tell_requester', {
    params: { '?p': 'person', '?team': 'team' },
    precondition: and(atom('reachable', '?p'), atom('filed', '?team', '?p')),
    effect: add('told', '?p', '?team'),
    actuator: { actuator: 'chat.send', args: { to: '?p', team: '?team' } },
  })
  .method('file-then-tell', {
    task: ['open_ticket', '?team', '?p', '?severity'],
    params: { '?team': 'team', '?p': 'person', '?severity': 'number' },
    subtasks: [['file_ticket', '?team', '?p', '?severity'], ['tell_requester', '?p', '?team']],
  })
  .build();

// 2. The world: a small JSON "desk" in the domain's state folder, one record per idempotency key.
const TEAMS = ['facilities', 'it'];
const PEOPLE = ['ana', 'ben'];

function deskAt(stateDir) {
  const file = join(stateDir, 'desk.json');
  return {
    load: () => (existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) : { effects: {} }),
    save(desk) {
      mkdirSync(stateDir, { recursive: true });
      writeFileSync(`${file}.tmp`, JSON.stringify(desk, null, 2));
      renameSync(`${file}.tmp`, file); // atomic: the old desk or the new one, never half of each
    },
  };
}

// Every attempt of one step carries the same ctx.key: apply the effect once, answer the same after.
function once(desk, ctx, apply) {
  const state = desk.load();
  if (!(ctx.key in state.effects)) {
    state.effects[ctx.key] = { invocation: ctx.invocation, ...apply() };
    desk.save(state);
  }
  return state.effects[ctx.key];
}

function actuators({ stateDir }) {
  const desk = deskAt(stateDir);
  return [
    {
      name: 'helpdesk.observe',
      kind: 'state',
      readOnly: true,
      argsSchema: z.object({ goal: z.object({ task: z.string(), args: z.array(z.union([z.string(), z.number()])) }) }),
      resultSchema: z.object({ objects: z.array(z.object({ name: z.string(), type: z.string() })), facts: z.array(z.array(z.union([z.string(), z.number()]))) }),
      async run(_args, ctx) {
        const mine = Object.values(desk.load().effects).filter((e) => e.invocation === ctx.invocation);
        return {
          objects: [...TEAMS.map((name) => ({ name, type: 'team' })), ...PEOPLE.map((name) => ({ name, type: 'person' }))],
          facts: [
            ...TEAMS.map((t) => ['has-queue', t]),
            ...PEOPLE.map((p) => ['reachable', p]),
            ...mine.filter((e) => e.ticket).map((e) => ['filed', e.team, e.requester]),
            ...mine.filter((e) => e.message).map((e) => ['told', e.to, e.team]),
          ],
        };
      },
    },
    {
      name: 'tickets.create',
      kind: 'tool',
      readOnly: false,
      argsSchema: z.object({ team: z.enum(TEAMS), requester: z.enum(PEOPLE), severity: z.number().int().min(1).max(3) }),
      resultSchema: z.object({ ticket: z.string() }),
      async run(args, ctx) {
        const effect = once(desk, ctx, () => ({ ticket: `${args.team.toUpperCase()}-${ctx.random.stream('ticket').int(10000)}`, ...args }));
        return { ticket: effect.ticket };
      },
      // Undo, when a later step of the same epoch fails: withdraw the ticket (its own idempotency key).
      async compensate(_args, result, ctx) {
        once(desk, ctx, () => ({ withdrawn: result.ticket }));
        return { withdrawn: result.ticket };
      },
    },
    {
      name: 'chat.send',
      kind: 'message',
      readOnly: false,
      argsSchema: z.object({ to: z.enum(PEOPLE), team: z.enum(TEAMS) }),
      resultSchema: z.object({ sent: z.boolean() }),
      async run(args, ctx) {
        once(desk, ctx, () => ({ message: `Your ticket with ${args.team} is open.`, ...args }));
        return { sent: true };
      },
    },
  ];
}

// 3. The policy: pure and versioned (its id is pinned). Severity 1 pages someone: a person approves.
const policy = {
  id: 'helpdesk@1',
  admitEpoch({ plan }) {
    const paging = plan.steps.some((s) => s.actuator === 'tickets.create' && s.actuatorArgs?.severity === 1);
    return paging ? { decision: 'require_approval', reason: 'severity 1 pages the on-call engineer' } : { decision: 'allow' };
  },
};

// 4. A scripted model for demos and tests: replies matched by request, never by position.
const intent = 'The printer on floor 3 is jammed again. Please get facilities on it, and let me (ana) know.';
const transcript = {
  model: 'helpdesk-demo',
  entries: [
    { match: { purpose: 'parse', epoch: 1 }, reply: { goal: { task: 'open_ticket', args: ['facilities', 'ana', 2] } } },
    { match: { purpose: 'parse', epoch: 2 }, reply: { done: true, summary: 'Opened a facilities ticket for the jammed printer and told ana.' } },
  ],
};

export default defineDomain({
  name: 'helpdesk',
  description: 'Open a helpdesk ticket with the right team, then tell the requester.',
  libraries: [library],
  actuators,
  observe: 'helpdesk.observe',
  policy,
  model: () => new ScriptedModel(transcript),
  intent,
  asOf: '2026-06-01T09:00:00Z',
});
