/**
 * The prompt a chat model sees for a parse (or authoring) request. Pure and deterministic: the
 * same request renders the same messages, so what was asked is reconstructible from the journal's
 * `model.requested` record alone.
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

export function renderPrompt(request: ModelRequest): ChatMessage[] {
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
