/**
 * `nestjs-model-context/sessions`: operating live sessions. The admin view (`McpSessionAdmin`, which
 * the module provides for injection), the session hooks' types (`sessions.onSession` /
 * `onSessionClose`) and the state a call reads with `ctx.state()`.
 */
export { McpSessionAdmin, type McpSessionSummary } from '../admin/mcp-session-admin.js';
export type {
  McpOnSession,
  McpOnSessionClose,
  McpSessionClosed,
  McpSessionCloseReason,
  McpSessionConnection,
} from '../engine/session-hooks.js';
export type { McpSessionState } from '../protocol/context.js';
