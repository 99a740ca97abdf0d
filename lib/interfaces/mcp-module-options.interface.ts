import type { McpLimitOptions, ResolvedMcpLimits } from '../engine/limits.js';
import type { McpExposeOptions } from '../expose/expose.interfaces.js';
import type { Type } from '@nestjs/common';
import type { CacheHint, McpIcon } from '../protocol/mcp-types.js';
import type { ListsCacheOption } from '../protocol/catalog.js';
import type { LogLevel } from '../protocol/mcp-types.js';
import type { McpTasksOptions } from '../tasks/mcp-tasks.js';
import type { McpSessionOptions, ResolvedMcpSessionOptions } from '../engine/session-options.js';
import type { McpShutdownOptions, ResolvedMcpShutdownOptions } from '../transport/shutdown-options.js';
import type { McpNotificationBus } from '../protocol/notification-bus.js';
import type { McpAuthOptions } from '../auth/mcp-auth.interface.js';
import type { McpRedisOptions } from '../redis/redis-client.js';
import type { McpTelemetryOptions } from '../telemetry/options.js';
import type { McpEventsOptions } from '../telemetry/events.js';
import type { McpSkillsOptions } from '../skills/mcp-skills-options.interface.js';
import type { McpToolSetsOptions } from '../tool-sets/tool-sets.options.js';

/**
 * Options of `McpModule.forRoot()` / `forRootAsync()`.
 *
 * @publicApi
 */
export interface McpModuleOptions {
  /** The server's name, sent as `serverInfo.name`. */
  name: string;
  /** The server's version, sent as `serverInfo.version`. */
  version: string;
  /** A human-friendly display name. */
  title?: string;
  /** What the server does, for people choosing it (sent in `serverInfo`). */
  description?: string;
  /** The server's home page (sent in `serverInfo`). */
  websiteUrl?: string;
  /** Icons clients may show for the server (sent in `serverInfo`). */
  icons?: McpIcon[];
  /** How to use this server, for the model (sent by `initialize` and `server/discover`). */
  instructions?: string;
  /**
   * Origins allowed to call the endpoint from a browser (`'*'` for any). By default a server
   * reached on loopback accepts only loopback origins, and elsewhere only same-origin ones.
   */
  allowedOrigins?: string[];
  /**
   * Accepted `Host` header values (`'*'` for any). By default a server reached on loopback
   * accepts only loopback host names (DNS-rebinding protection), and elsewhere any host.
   */
  allowedHosts?: string[];
  /**
   * Largest accepted request body, in bytes. The app's JSON body parser (Nest's default: 100 KB)
   * applies first; raise it with `app.useBodyParser('json', { limit })` to accept more.
   * @default 4194304 (4 MiB)
   */
  maxBodyBytes?: number;
  /** Legacy-era (initialize-based) sessions. The 2026-07-28 era is always stateless. */
  sessions?: McpSessionOptions;
  /**
   * Modules whose providers are scanned for `@Tool()` and friends. By default every provider of
   * the application is scanned. Give each of two McpModules its own list to keep them apart.
   */
  include?: Type<unknown>[];
  /**
   * Existing controller routes and `@nestjs/cqrs` commands/queries to serve as tools, without
   * changing them. See docs/expose-routes.md.
   */
  expose?: McpExposeOptions;
  /**
   * Pattern every tool name must match. The default is the subset every popular client accepts;
   * the spec allows up to 128 characters and `.` as well.
   * @default /^[A-Za-z0-9_-]{1,64}$/
   */
  toolNamePattern?: RegExp;
  /**
   * Send raw messages of unexpected errors to the client (they are always logged). Keep off in
   * production: messages can leak internals.
   * @default false
   */
  exposeInternalErrors?: boolean;
  /** Cache hints on 2026-07-28 results. */
  cache?: {
    /** On `server/discover`. @default { ttlMs: 300000, cacheScope: 'public' } */
    discover?: CacheHint;
    /**
     * On `tools/list`, `prompts/list`, `resources/list` and `resources/templates/list` (every page).
     * A function `(list, ctx) => hint` computes it per request (`list` is `tools`, `prompts`,
     * `resources` or `resourceTemplates`). Items' own `listCache` can only shorten the TTL or make
     * a page `private`; a page that guards make caller-specific is always `private`.
     * @default { ttlMs: 60000, cacheScope: 'public' }
     */
    lists?: ListsCacheOption;
    /**
     * On `resources/read`, unless the resource or template sets its own `cache`. Reads run your
     * code and may differ per user, so nothing is cached by default; give static resources a
     * longer `ttlMs` (and `public` only when every caller sees the same content).
     * @default { ttlMs: 0, cacheScope: 'private' }
     */
    reads?: CacheHint;
  };
  /**
   * Items per page of `tools/list`, `resources/list`, `resources/templates/list` and
   * `prompts/list`. Lists longer than this answer with a `nextCursor`; cursors expire (-32602)
   * when the lists change.
   * @default 100
   */
  pageSize?: number;
  /**
   * Legacy sessions: the log level used until the client calls `logging/setLevel`.
   * `undefined` sends no log messages until then.
   * @default 'info'
   */
  defaultLogLevel?: LogLevel | 'none';
  /**
   * Interval of SSE comment keep-alives on long-lived streams and slow calls, in milliseconds.
   * @default 15000
   */
  keepAliveMs?: number;
  /**
   * Leave out of `tools/list`, `prompts/list`, `resources/list` and `resources/templates/list`
   * what the caller may not use: capabilities whose guards (method, class or global) deny it,
   * evaluated like a call (`McpExecutionContext.isListing()` tells a guard it is a listing), and,
   * with `auth`, those whose `@RequireScopes` its token does not cover. Lists that vary by caller
   * are then marked `cacheScope: "private"`. Calls and completions are checked either way.
   * @default true
   */
  guardAwareLists?: boolean;
  /**
   * Tool sets and progressive disclosure: named groups of tools, the sets each caller may use
   * (from `select`, the `?toolsets=` query parameter, or `default`), and `mode: 'progressive'`,
   * where `tools/list` shows discovery tools instead of the catalog. A tool outside the caller's
   * sets is unknown on every path. See "Tool sets and progressive disclosure" in the README.
   * @default every tool listed to every caller
   */
  toolSets?: McpToolSetsOptions;
  /** How DTOs become JSON Schemas in the lists. */
  schemas?: {
    /**
     * Admit `null` for `@IsOptional()` properties, emitted as `type: [X, "null"]` (class-validator
     * accepts `null` there). Off by default, so schemas stay portable: single-type dialects
     * (Gemini-style function declarations) and Inspector's `--strict` checks refuse type unions;
     * an optional property is then typed by its rules alone (and left out of `required`); the
     * schema is stricter than class-validator, which still lets a `null` through.
     * @default false
     */
    nullableOptionals?: boolean;
  };
  /**
   * Makes the endpoint an OAuth 2.1 resource server: every request needs a bearer token (checked
   * by the built-in verification `jwt` / `introspection` / `dpop`, by `verifyToken`, or by the
   * app's own guard, then read from `request.user`), 401/403 carry
   * RFC 6750 challenges, and the RFC 9728 metadata document is served.
   */
  auth?: McpAuthOptions;
  /**
   * Fans change notifications (list changes, resource updates) out to every open stream.
   * @default an in-process bus (one instance)
   */
  notificationBus?: McpNotificationBus;
  /**
   * How long a legacy-era call waits for the client to answer an elicitation, sampling or roots
   * request before it fails with a tool error.
   * @default 300000 (5 minutes)
   */
  clientRequestTimeoutMs?: number;
  /**
   * The `requestState` of multi-round-trip requests (2026-07-28 elicitation, sampling, roots):
   * HMAC-protected, bound to method, arguments and principal, single-use. Give every instance the
   * same `secret` when several serve one endpoint.
   */
  requestState?: {
    /** The HMAC key. @default 32 random bytes per process (with `redis`: one secret shared through Redis) */
    secret?: string | Buffer;
    /** How long a request state stays valid. @default 600000 (10 minutes) */
    ttlMs?: number;
  };
  /**
   * Run several instances behind a load balancer as one server: legacy sessions, the SSE event
   * store, change notifications, single-use request states and server-to-client routing move to
   * Redis (`ioredis` 5, an optional peer dependency). Replaces `sessions.store`,
   * `sessions.eventStore` and `notificationBus`, which cannot be combined with it.
   *
   * @example { url: process.env.REDIS_URL }
   */
  redis?: McpRedisOptions;
  /**
   * Bounds on everything a caller can make the server hold or do. Each default is safe for a
   * public endpoint; every refusal names the limit and the option that raises it. See SECURITY.md.
   */
  limits?: McpLimitOptions;
  /**
   * Graceful shutdown, with `app.enableShutdownHooks()`: on SIGTERM the endpoint refuses new
   * sessions, calls and streams (503 + `Retry-After`), ends the SSE streams that can resume
   * elsewhere with a `retry:` hint, lets running calls finish within `graceMs` (their events go on
   * to the event store), cancels the rest and flushes the event store.
   */
  shutdown?: McpShutdownOptions;
  /**
   * OpenTelemetry traces and metrics per the semantic conventions for MCP: one SERVER span per
   * request (its parent from `params._meta.traceparent`, else the HTTP headers), and the
   * `mcp.server.operation.duration` / `mcp.server.session.duration` histograms. On whenever
   * `@opentelemetry/api` (an optional peer) is installed, sent to the SDK the app registers;
   * `false` turns it off. See docs/operations.md.
   * @default on when `@opentelemetry/api` loads
   */
  telemetry?: boolean | McpTelemetryOptions;
  /** Audit and integration events ({@link McpEvents}). Never argument values unless `includeArguments`. */
  events?: McpEventsOptions;
  /**
   * Agent Skills served per SEP-2640 (`io.modelcontextprotocol/skills`) from folders, with their
   * limits; `@Skill()` methods add skills from providers. See docs/apps-and-skills.md.
   */
  skills?: McpSkillsOptions;
  /** Tasks: how long they are kept, how often clients poll, their bounds and store. See SECURITY.md. */
  tasks?: McpTasksOptions;
}

/** @publicApi */
export interface McpOptionsFactory {
  createMcpOptions(): McpModuleOptions | Promise<McpModuleOptions>;
}

/** Options after defaults and validation. @internal */
export interface ResolvedMcpOptions
  extends
    Required<Pick<McpModuleOptions, 'maxBodyBytes' | 'toolNamePattern' | 'exposeInternalErrors' | 'keepAliveMs'>>,
    Omit<
      McpModuleOptions,
      | 'maxBodyBytes'
      | 'toolNamePattern'
      | 'exposeInternalErrors'
      | 'keepAliveMs'
      | 'sessions'
      | 'cache'
      | 'defaultLogLevel'
      | 'clientRequestTimeoutMs'
      | 'requestState'
      | 'pageSize'
      | 'limits'
      | 'shutdown'
    > {
  clientRequestTimeoutMs: number;
  limits: ResolvedMcpLimits;
  /** `shared`: no secret was given and Redis is configured, so the instances share one from Redis. */
  requestState: { secret: Buffer; ttlMs: number; shared?: boolean };
  guardAwareLists: boolean;
  schemas: { nullableOptionals: boolean };
  sessions: ResolvedMcpSessionOptions;
  shutdown: ResolvedMcpShutdownOptions;
  cache: { discover: CacheHint; lists: ListsCacheOption; reads: CacheHint };
  pageSize: number;
  defaultLogLevel?: LogLevel;
}

export { DEFAULT_MCP_LIMITS } from '../engine/limits.js';
export type { McpLimitOptions, ResolvedMcpLimits, McpSessionOptions, McpShutdownOptions };
