/**
 * What this runtime is, as an invocation pins it: its version, and the numbered behaviour flags it
 * applies (machines/flags.ts). A start pins both; a resume, approve, cancel, fork or replay refuses
 * a pin whose flags this runtime does not implement (pin-check.ts), and replay follows the
 * journal's flags, never today's defaults.
 */
import { IMPLEMENTED_FLAGS } from '../machines/flags.js';

export const RUNTIME_VERSION = 'weft@0.1.0';
/** Numbered behaviour flags this runtime applies (machines/flags.ts); recorded in the pin, and replay follows the journal's. */
export const BEHAVIOUR_FLAGS: readonly number[] = IMPLEMENTED_FLAGS;
