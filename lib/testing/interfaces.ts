import type { McpPrincipal } from '../auth/mcp-auth.interface.js';
import type { SamplingRequest, SamplingResult, McpRoot } from '../protocol/interaction.js';
import type { JsonObject, LogLevel } from '../protocol/mcp-types.js';

/**
 * The protocol revision the test client speaks: a legacy one (the client sends `initialize` and
 * holds a session) or 2026-07-28 (stateless, every request carries its `_meta` envelope).
 *
 * @publicApi
 */
export type McpTestEra = '2024-11-05' | '2025-03-26' | '2025-06-18' | '2025-11-25' | '2026-07-28';

/** `params` of an `elicitation/create` request, as a handler sees them. @publicApi */
export interface McpTestElicitation {
  message: string;
  mode?: 'form' | 'url';
  requestedSchema?: JsonObject;
  url?: string;
  elicitationId?: string;
  [key: string]: unknown;
}

/** The answer to an elicitation. @publicApi */
export interface McpTestElicitationAnswer {
  action: 'accept' | 'decline' | 'cancel';
  content?: Record<string, string | number | boolean | string[]>;
}

/** A `notifications/progress` of the call. @publicApi */
export interface McpTestProgress {
  progress: number;
  total?: number;
  message?: string;
}

/** A `notifications/message` (log) of the call. @publicApi */
export interface McpTestLog {
  level: LogLevel;
  data: unknown;
  logger?: string;
}

/**
 * Answers to what a handler asks the client. On a legacy era they answer the server's requests
 * (`elicitation/create`, `sampling/createMessage`, `roots/list`); on 2026-07-28 they fulfil the
 * `input_required` rounds. A question with no handler fails the call with an McpTestError.
 *
 * @publicApi
 */
export interface McpTestInputHandlers {
  onElicit?: (request: McpTestElicitation) => McpTestElicitationAnswer | Promise<McpTestElicitationAnswer>;
  onSample?: (request: SamplingRequest) => SamplingResult | Promise<SamplingResult>;
  onRoots?: () => McpRoot[] | Promise<McpRoot[]>;
}

/**
 * Options of {@link McpTestClient.create}.
 *
 * @publicApi
 */
export interface McpTestClientOptions extends McpTestInputHandlers {
  /** @default '2025-11-25' */
  era?: McpTestEra;
  /**
   * Who calls, as McpModule's `auth` would take it (`{ id, scopes, claims }`): `ctx.principal`,
   * and what `@RequireScopes` checks. It is not put on `request.user`: give `user` for that.
   */
  principal?: McpPrincipal;
  /**
   * The user object the app's own authentication puts on `request.user` (what its passport
   * strategy's `validate()` returns, or its guard sets), as the app's guards, `REQUEST` and
   * `ctx.request` read it. Unless `principal` is given too, the principal is derived from it as the
   * endpoint derives it (`auth.principalFrom`, else `principalFromUser`).
   */
  user?: unknown;
  /**
   * Run the app's real authentication on every request, as an HTTP request to the endpoint gets
   * it: the guards of the endpoint's route (global `APP_GUARD`s, `controllerDecorators` guards)
   * run with `headers`, e.g. `{ authorization: 'Bearer <a real token>' }`, and set `request.user`
   * as over HTTP; the principal is then taken as the endpoint takes it (`auth.verifyToken`, else
   * that user). A refused request throws an {@link McpTestError} with the endpoint's 401/403
   * message (`data.status`). Not with `principal` or `user`, which stand for a caller already
   * authenticated. @default false
   */
  authenticate?: boolean;
  /** Request headers (guards and `@McpHeader` see them as `request.headers`). */
  headers?: Record<string, string>;
  /**
   * Client capabilities declared in `initialize` (legacy) or in every request's `_meta`.
   * @default { elicitation: {}, sampling: {}, roots: {} }
   */
  capabilities?: JsonObject;
  /** @default { name: 'mcp-test-client', version: '1.0.0' } */
  clientInfo?: { name: string; version: string; [key: string]: unknown };
  /** The lowest log level the tools send (`logging/setLevel`, or `_meta` on 2026-07-28). @default 'debug' */
  logLevel?: LogLevel;
  /** Rounds of 2026-07-28 `input_required` answered before the call fails. @default 10 */
  maxInputRounds?: number;
}

/**
 * Per-call options of {@link McpTestClient.callTool} (handlers here win over the client's).
 *
 * @publicApi
 */
export interface McpTestCallOptions extends McpTestInputHandlers {
  onProgress?: (progress: McpTestProgress) => void;
  onLog?: (log: McpTestLog) => void;
  /** Aborting cancels the call (as a client closing its request does); the promise rejects. */
  signal?: AbortSignal;
  /** `params._meta` entries to add (the 2026-07-28 envelope keys are the client's). */
  meta?: JsonObject;
}

/** A reference for `completion/complete`. @publicApi */
export type McpTestCompletionRef = { type: 'ref/prompt'; name: string } | { type: 'ref/resource'; uri: string };
