import { McpError, ToolError } from './errors.js';
import type { InferArgs, StandardSchemaV1 } from '../schema/standard-schema.js';
import {
  rootsResultProblem,
  samplingResultProblem,
  type ElicitOutcome,
  type McpRoot,
  type SamplingRequest,
  type SamplingResult,
} from './interaction.js';
import { ErrorCode } from './json-rpc.js';
import type { McpCall } from './mcp-call.js';
import type { JsonObject, LogLevel } from './mcp-types.js';
import { McpContextBase } from './context-base.js';
import { askClient } from './client-questions.js';
import {
  LEVEL_RANK,
  type InputState,
  type InteractionSupport,
  type McpAskOptions,
  type McpRunHooks,
} from './call-facts.js';

export { isLogLevel, requestState } from './call-facts.js';
export type {
  InputState,
  InteractionSupport,
  McpAskOptions,
  McpSessionState,
  McpRunHooks,
  McpTaskHooks,
  RequestEnvelope,
  SessionStateHolder,
} from './call-facts.js';

/**
 * The per-call context a handler receives through `@Ctx()`: who is calling, over which revision,
 * and ways to talk back while the call runs.
 *
 * @publicApi
 */
export class McpContext extends McpContextBase implements McpCall {
  private lastProgress = Number.NEGATIVE_INFINITY;
  private inputCounter = 0;
  private inputState?: InputState = undefined;
  /**
   * @internal A modern interactive call's way back from a stop for missing input: the
   * `input_required` result (it rethrows any other error). Set by the dispatcher's `interactive`.
   */
  recoverInput?: (error: unknown) => JsonObject = undefined;

  /** @internal The answers of earlier rounds and the questions pending, made on first use: most calls ask nothing. */
  get inputs(): InputState {
    return (this.inputState ??= { answers: {}, pending: {} });
  }
  /** @internal Set while the call runs outside its request (a run mode: as a task). */
  runHooks?: McpRunHooks = undefined;
  /**
   * @internal The call's rate limits were counted when its task was admitted (before the task
   * existed, on the instance that took the request): running it counts them no more.
   */
  policiesAdmitted?: boolean = undefined;

  /** The call itself, for code written against {@link McpCall} (`call.context`). */
  get context(): McpContext {
    return this;
  }

  /**
   * @internal The same call as one capability's guards see it while a list or a completion asks
   * them (`method` is then the list's, `name` the capability's). Everything else, `context`
   * included, is this call's.
   */
  viewAs(method: string, name: string, rawArguments: JsonObject, args: unknown): McpCall {
    return { method, name, rawArguments, arguments: args, context: this };
  }

  /**
   * For a call that runs as a task: which run this is, from 1. With a durable queue a task whose
   * instance died runs again on another (at least once), and this tells the tool it may have
   * done part of the work before; undefined outside tasks.
   */
  get taskAttempt(): number | undefined {
    const hooks = this.runHooks;
    return hooks ? (hooks.attempt ?? 1) : undefined;
  }

  /**
   * Asks the user for structured input. `schema` is a DTO class (flat: string, number, integer,
   * boolean and enum properties), a flat Standard Schema object (zod 4, valibot) or a raw
   * elicitation schema. Resolves to the validated DTO instance (or the schema's output) on
   * `accept`, or to the decline/cancel outcome.
   *
   * Legacy era: sends `elicitation/create` to the client and awaits the answer. Modern era: the
   * call ends with an `input_required` result, and the client's retry re-runs the handler; this
   * same call then returns the answer. Give a stable `key` when the order of questions may vary.
   */
  elicit<S extends StandardSchemaV1>(
    message: string,
    schema: S,
    options?: McpAskOptions,
  ): Promise<ElicitOutcome<InferArgs<S>>>;
  elicit<T = JsonObject>(message: string, schema: unknown, options?: McpAskOptions): Promise<ElicitOutcome<T>>;
  async elicit<T = JsonObject>(
    message: string,
    schema: unknown,
    options: McpAskOptions = {},
  ): Promise<ElicitOutcome<T>> {
    this.require('elicitation.form', { elicitation: {} }, 'form elicitation');
    const support = this.interaction();
    const params: JsonObject = { message, requestedSchema: support.requestedSchema(schema) };
    if (this.protocolVersion >= '2025-11-25') params.mode = 'form';
    return this.ask(
      options.key ?? `elicitation-${++this.inputCounter}`,
      'elicitation/create',
      params,
      async (answer) => {
        if (!isObject(answer) || !['accept', 'decline', 'cancel'].includes(answer.action as string)) return undefined;
        if (answer.action !== 'accept') return { action: answer.action } as ElicitOutcome<T>;
        const checked = await support.validateContent(schema, answer.content ?? {});
        return checked.ok ? ({ action: 'accept', content: checked.value as T } as ElicitOutcome<T>) : undefined;
      },
      undefined,
      options.beforeTask,
    );
  }

  /**
   * Sends the user to a URL (for secrets, payments, OAuth flows: never ask for those in a form).
   * Resolves to the user's consent outcome, not to the completion of the flow. `elicitationId`
   * is sent on the legacy era only: the 2026-07-28 revision dropped it, with the
   * `notifications/elicitation/complete` channel it keyed.
   */
  async elicitUrl(
    message: string,
    url: string,
    options: McpAskOptions & { elicitationId?: string } = {},
  ): Promise<{ action: 'accept' | 'decline' | 'cancel' }> {
    this.require('elicitation.url', { elicitation: { url: {} } }, 'URL elicitation');
    const params: JsonObject = { mode: 'url', message, url };
    if (this.era === 'legacy')
      params.elicitationId = options.elicitationId ?? `${this.requestId}-${this.inputCounter + 1}`;
    return this.ask(
      options.key ?? `elicitation-${++this.inputCounter}`,
      'elicitation/create',
      params,
      async (answer) =>
        isObject(answer) && ['accept', 'decline', 'cancel'].includes(answer.action as string)
          ? { action: answer.action as 'accept' | 'decline' | 'cancel' }
          : undefined,
      undefined,
      options.beforeTask,
    );
  }

  /** Asks the client's model for a completion (`sampling/createMessage`). */
  async sample(request: SamplingRequest, options: McpAskOptions = {}): Promise<SamplingResult> {
    this.require(
      request.tools ? 'sampling.tools' : 'sampling',
      request.tools ? { sampling: { tools: {} } } : { sampling: {} },
      'sampling',
    );
    return this.ask(
      options.key ?? `sampling-${++this.inputCounter}`,
      'sampling/createMessage',
      request as unknown as JsonObject,
      async (answer) => (samplingResultProblem(answer) === undefined ? (answer as SamplingResult) : undefined),
      samplingResultProblem,
      options.beforeTask,
    );
  }

  /** Asks the client for its roots (`roots/list`). */
  async roots(options: McpAskOptions = {}): Promise<McpRoot[]> {
    this.require('roots', { roots: {} }, 'roots');
    return this.ask(
      options.key ?? `roots-${++this.inputCounter}`,
      'roots/list',
      {},
      async (answer) =>
        rootsResultProblem(answer) === undefined ? ((answer as JsonObject).roots as unknown as McpRoot[]) : undefined,
      rootsResultProblem,
      options.beforeTask,
    );
  }

  /** @internal True when this round needs answers the client has not given. */
  get inputRequired(): boolean {
    return this.inputState !== undefined && Object.keys(this.inputState.pending).length > 0;
  }

  private interaction(): InteractionSupport {
    if (!this.support) throw new ToolError('This request cannot ask the client for input.');
    return this.support;
  }

  private require(capability: Parameters<McpContext['supports']>[0], wire: JsonObject, what: string): void {
    if (this.supports(capability)) return;
    if (this.era === 'modern') {
      throw new McpError(
        ErrorCode.MissingRequiredClientCapability,
        `This request needs the client's ${what} capability (${capability}), which the request did not declare in _meta["io.modelcontextprotocol/clientCapabilities"].`,
        { requiredCapabilities: wire },
      );
    }
    throw new ToolError(
      `This tool needs ${what}, but the client did not declare the "${capability}" capability when it initialized. Use a client that supports it.`,
    );
  }

  /** A question to the client, asked the way this call can ask it (see askClient). */
  private ask<T>(
    key: string,
    method: string,
    params: JsonObject,
    accept: (answer: unknown) => Promise<T | undefined>,
    problem?: (answer: unknown) => string | undefined,
    beforeTask?: boolean,
  ): Promise<T> {
    const support = this.interaction();
    return askClient(
      {
        era: this.era,
        task: this.runHooks,
        inputs: this.inputs,
        probe: this.probe,
        broker: this.facts.broker,
        send: (request) => this.emit(request),
        signal: () => this.signal,
        timeoutMs: support.timeoutMs,
        owner: this.session?.id,
      },
      { key, method, params, accept, problem, beforeTask },
    );
  }

  /**
   * Reports progress to the client. Sent only when the request carried a `progressToken`;
   * values that do not increase are dropped, as the spec requires progress to grow.
   */
  progress(progress: number, total?: number, message?: string): void {
    if (this.runHooks) {
      if (!(progress > this.lastProgress)) return;
      this.lastProgress = progress;
      return this.runHooks.status(message ?? (total !== undefined ? `${progress}/${total}` : String(progress)));
    }
    const token = this.progressToken;
    if (this.closed || token === undefined || !(progress > this.lastProgress)) return;
    this.lastProgress = progress;
    const params: JsonObject = { progressToken: token, progress };
    if (total !== undefined) params.total = total;
    if (message !== undefined) params.message = message;
    this.emit({ jsonrpc: '2.0', method: 'notifications/progress', params });
  }

  /** Sends a log message on this call's stream, if the client asked for this level. */
  log(level: LogLevel, data: unknown, logger?: string): void {
    if (this.runHooks) return this.runHooks.status(typeof data === 'string' ? data : JSON.stringify(data));
    const threshold = this.logLevel;
    if (this.closed || threshold === undefined || LEVEL_RANK.get(level)! < LEVEL_RANK.get(threshold)!) return;
    const params: JsonObject = { level, data };
    if (logger !== undefined) params.logger = logger;
    this.emit({ jsonrpc: '2.0', method: 'notifications/message', params });
  }
}

function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
