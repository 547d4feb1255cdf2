// GET /events: a hub that relays the event bus to SSE clients, and the koa handler for it.
export { SseHub, SSE_DEFAULTS } from './hub.js';
export { sseHandler, type SseHandlerOptions } from './handler.js';
export type { AttachOptions, SseEventSource, SseHubOptions, SseSourceEvent, SseStats } from './types.js';
