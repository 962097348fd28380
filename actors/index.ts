/**
 * Actuators — the public face of actors/: the actuator contract, the seeded PRNG actuators get in
 * their context, and the model adapters (OpenAI-compatible chat completions, scripted).
 */
export * from './actuator.js';
export * from './random.js';
export * from './model/model.js';
export { OpenAiModel, type OpenAiModelOptions } from './model/openai.js';
export { ScriptedModel, NoScriptedReplyError, transcriptSchema, type Transcript } from './model/scripted.js';
export { renderPrompt, type ChatMessage } from './model/prompt.js';
