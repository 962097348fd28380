/**
 * The prompt a chat model sees for a parse or an authoring request. Pure and deterministic: the
 * same request renders the same messages, so what was asked is reconstructible from the journal
 * (its `model.requested` record, the observed state and the pinned library).
 *
 * Parse: the intent, the outcomes so far and the tasks the library knows; the reply names the
 * next goal or says done — it never plans steps. Authoring (the gap path, when no method covers
 * the goal): the goal, why no method applied, the operators a fragment may use with the actuator
 * each dispatches and its args, the observed state (bounded), and the fragment format and rules.
 */
import { canonicalize } from '../../journal/canonical.js';
import type { ModelRequest } from './model.js';

export interface ChatMessage {
  role: 'system' | 'user';
  content: string;
}

const REPLY_FORMAT = [
  'Reply with exactly one JSON object and nothing else:',
  '- {"goal": {"task": "<task name>", "args": [<arg>, ...]}} to name the next goal, using one of the tasks below with its arguments in order;',
  '- {"done": true, "summary": "<one sentence>"} when the intent is fulfilled or cannot be taken further.',
  'Name only tasks from the list. Do not plan steps yourself: a planner decomposes the goal.',
].join('\n');

const FRAGMENT_FORMAT = [
  'Reply with exactly one JSON object and nothing else:',
  '{"steps": [{"operator": "<operator name>", "args": [<arg>, ...]}, ...]}',
  'Rules:',
  '- use only the operators listed below, each with exactly its arguments, in order;',
  '- every argument is explicit: an object name from the observed state, or a number; never a variable, an expression or a value you derived;',
  '- the steps run in order from the observed state; each step\'s precondition must hold when it runs;',
  '- the fewest steps that achieve the goal; world effects (steps that are not read-only) are admitted by policy and may need a person\'s approval.',
].join('\n');

/** At most this much of the observed state goes into an authoring prompt. */
const STATE_CHARS = 12_000;

function renderAuthoring(request: ModelRequest): ChatMessage[] {
  const operators = (request.operators ?? [])
    .map((o) => {
      const params = o.params.map((p) => `${p.name}: ${p.type}`).join(', ');
      const effect = o.actuator ? ` → actuator ${o.actuator.name} ${canonicalize(o.actuator.args)}` : '';
      return `- ${o.name}(${params})${effect}${o.readOnly ? ' [read-only]' : ' [world effect]'}`;
    })
    .join('\n');
  const system = `You author a short fragment of operators that achieves a goal the planner's methods do not cover.\n${FRAGMENT_FORMAT}\n\nOperators:\n${operators}`;
  const state = request.state === undefined ? 'unknown' : canonicalize(request.state);
  const lines = [
    `Intent: ${request.intent}`,
    `Goal: ${request.goal ? `${request.goal.task}(${request.goal.args.map((a) => JSON.stringify(a)).join(', ')})` : 'unknown'}`,
    `Why no method applies: ${request.explanation ?? 'unknown'}`,
    `Observed state: ${state.length > STATE_CHARS ? `${state.slice(0, STATE_CHARS)}… (cut at ${STATE_CHARS} of ${state.length} chars)` : state}`,
  ];
  if (request.feedback) lines.push(`Your previous fragment was rejected: ${request.feedback}. Reply again, correctly.`);
  return [
    { role: 'system', content: system },
    { role: 'user', content: lines.join('\n') },
  ];
}

export function renderPrompt(request: ModelRequest): ChatMessage[] {
  if (request.purpose === 'author') return renderAuthoring(request);
  const tasks = request.tasks
    .map((t) => `- ${t.name}(${t.params.map((p) => `${p.name}: ${p.type}`).join(', ')})${t.description ? ` — ${t.description}` : ''}`)
    .join('\n');
  const system = `You turn a person's intent into the next goal for a planner.\n${REPLY_FORMAT}\n\nTasks:\n${tasks}`;
  const lines = [`Intent: ${request.intent}`, `Epoch: ${request.epoch}`];
  lines.push(request.outcomes.length ? `Outcomes so far (oldest first): ${canonicalize(request.outcomes)}` : 'Outcomes so far: none');
  if (request.feedback) lines.push(`Your previous reply was rejected: ${request.feedback}. Reply again, correctly.`);
  return [
    { role: 'system', content: system },
    { role: 'user', content: lines.join('\n') },
  ];
}
