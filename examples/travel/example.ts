/**
 * The travel example as `weft run travel` (and `npm start`) loads it through examples/registry.ts:
 * the app over a state folder, the scripted model playing the transcript, the default intent and
 * the pinned `asOf` — so the demo is the same on every machine.
 *
 * Invariants:
 * - The providers' state lives in `<stateDir>/providers.json`, created from the seed world when
 *   missing and reused otherwise, so a resumed run sees what a crashed run already applied.
 * - `hooks.afterEffect` is called after every applied effect is durable and before the actuator
 *   returns (never on a deduplicated call) — where the crash tests kill the process.
 * - `asOf` is before the conference (the 12th), so the check-in reminder lands on the 11th.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { ScriptedModel } from '../../actors/model/scripted.js';
import type { Example } from '../registry.js';
import { createTravelApp } from './index.js';
import { TRAVEL_INTENT, travelTranscript } from './transcript.js';

export const TRAVEL_AS_OF = '2026-06-01T09:00:00.000Z';
export const TRAVEL_STATE_FILE = 'providers.json';

export const travelExample: Example = {
  name: 'travel',
  description: 'Book a conference trip to Lisbon under a budget: search, hold, pay, confirm, then send the itinerary and set a reminder.',
  intent: TRAVEL_INTENT,
  asOf: TRAVEL_AS_OF,
  libraryName: 'travel',
  create(stateDir, hooks) {
    mkdirSync(stateDir, { recursive: true });
    const afterEffect = hooks?.afterEffect?.bind(hooks);
    const app = createTravelApp({ stateFile: join(stateDir, TRAVEL_STATE_FILE), ...(afterEffect ? { crashAfterEffect: afterEffect } : {}) });
    return { app, model: new ScriptedModel(travelTranscript) };
  },
};
