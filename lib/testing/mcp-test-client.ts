import type { INestApplicationContext } from '@nestjs/common';
import { type Observable, Subject, type Subscription } from 'rxjs';
import type { JsonRpcMessage } from '../protocol/json-rpc.js';
import { ErrorCode } from '../protocol/json-rpc.js';
import { McpMethods } from '../protocol/methods.js';
import type { CallToolResult, JsonObject, ToolDescriptor } from '../protocol/mcp-types.js';
import type { GetPromptResult, PromptDescriptor } from '../protocol/prompt-messages.js';
import type { ReadResourceResult } from '../protocol/resource-contents.js';
import type { ResourceDescriptor, ResourceTemplateDescriptor } from '../protocol/resource-contents.js';
import type { CompletionResult } from '../completion/completion.js';
import {
  META_CLIENT_CAPABILITIES,
  META_CLIENT_INFO,
  META_LOG_LEVEL,
  META_PROTOCOL_VERSION,
  isSupportedModernVersion,
} from '../protocol/versions.js';
import { McpInProcessTransport } from '../transport/in-process.transport.js';
import type { McpTestCallOptions, McpTestClientOptions, McpTestCompletionRef, McpTestEra } from './interfaces.js';
import { McpTestError } from './mcp-test-error.js';
import { clientAnswer } from './mcp-test-answers.js';
import { testSenderOf, type McpTestSender } from './mcp-test-sender.js';

type Json = Record<string, any>;

/** One page of a list method. @publicApi */
export interface McpTestPage<T> {
  items: T[];
  nextCursor?: string;
}

const DEFAULT_CAPABILITIES: JsonObject = { elicitation: {}, sampling: {}, roots: {} };
/** Guards against a server whose cursors never end. */
const MAX_PAGES = 1_000;

/**
 * An MCP client for tests, in process: no port, no HTTP client, the very engine HTTP and stdio
 * use, with the app's guards, interceptors, pipes and filters. On a legacy era it initializes a
 * session and answers the server's requests with the handlers; on 2026-07-28 it sends the `_meta`
 * envelope with every request and answers the `input_required` rounds itself.
 *
 * @example
 * ```ts
 * const moduleRef = await Test.createTestingModule({ imports: [AppModule] }).compile();
 * const mcp = await McpTestClient.create(moduleRef, { era: '2026-07-28' });
 * const result = await mcp.callTool('create_task', { title: 'Write tests' });
 * await mcp.close();
 * await moduleRef.close();
 * ```
 * @publicApi
 */
export class McpTestClient {
  /** The negotiated protocol version (the era asked for). */
  readonly protocolVersion: McpTestEra;
  /** `serverInfo` from `initialize` or `server/discover`. */
  serverInfo: Json = {};
  /** The server's capabilities from `initialize` or `server/discover`. */
  serverCapabilities: Json = {};
  /** The server's `instructions`, if any. */
  instructions?: string;

  private readonly transport: McpInProcessTransport;
  private readonly modern: boolean;
  private readonly changes = new Subject<JsonObject>();
  private readonly streams = new Set<Subscription>();
  private nextId = 1;

  /**
   * Change notifications the server sends without a call: `notifications/tools/list_changed`,
   * `.../prompts/list_changed`, `.../resources/list_changed`, and `notifications/resources/updated`
   * for URIs passed to {@link subscribeResource}. On a legacy era they come on the session's
   * stream; on 2026-07-28 on a `subscriptions/listen` stream the client opened in `create()`.
   */
  readonly notifications: Observable<JsonObject> = this.changes.asObservable();

  private constructor(
    transport: McpInProcessTransport,
    private readonly options: McpTestClientOptions,
    /** Who sends each message. */
    private readonly sendOptions: McpTestSender,
  ) {
    this.transport = transport;
    this.protocolVersion = options.era ?? '2025-11-25';
    this.modern = isSupportedModernVersion(this.protocolVersion);
  }

  /**
   * A client on the McpModule of `target`: a `TestingModule` (compiled by the test, so
   * `overrideProvider` works as usual), an `INestApplication` or an application context. It is
   * initialized if it was not (lifecycle hooks run, no port is opened). The test still closes
   * `target` itself, after {@link close}.
   */
  static async create(target: INestApplicationContext, options: McpTestClientOptions = {}): Promise<McpTestClient> {
    await target.init();
    const transport = McpInProcessTransport.forApp(target);
    const client = new McpTestClient(transport, options, testSenderOf(target, options));
    await client.connect();
    return client;
  }

  /** Every tool, following `nextCursor`. */
  async listTools(): Promise<ToolDescriptor[]> {
    return this.all(McpMethods.toolsList.name, 'tools');
  }

  /** One page of `tools/list`. */
  listToolsPage(cursor?: string): Promise<McpTestPage<ToolDescriptor>> {
    return this.page(McpMethods.toolsList.name, 'tools', cursor);
  }

  /**
   * Calls a tool and returns its result. A failing tool (validation, a thrown error) gives an
   * `isError: true` result, not an exception; protocol errors (unknown tool, missing capability,
   * refused scope) throw an {@link McpTestError}.
   */
  async callTool(name: string, args: JsonObject = {}, options: McpTestCallOptions = {}): Promise<CallToolResult> {
    return (await this.request(McpMethods.toolsCall.name, { name, arguments: args }, options)) as CallToolResult;
  }

  /** Every resource, following `nextCursor`. */
  listResources(): Promise<ResourceDescriptor[]> {
    return this.all(McpMethods.resourcesList.name, 'resources');
  }

  /** One page of `resources/list`. */
  listResourcesPage(cursor?: string): Promise<McpTestPage<ResourceDescriptor>> {
    return this.page(McpMethods.resourcesList.name, 'resources', cursor);
  }

  /** Every resource template, following `nextCursor`. */
  listResourceTemplates(): Promise<ResourceTemplateDescriptor[]> {
    return this.all(McpMethods.resourceTemplatesList.name, 'resourceTemplates');
  }

  /** Reads a resource; an unknown URI throws an {@link McpTestError} (-32002 on legacy eras). */
  async readResource(uri: string, options: McpTestCallOptions = {}): Promise<ReadResourceResult> {
    return (await this.request(McpMethods.resourcesRead.name, { uri }, options)) as unknown as ReadResourceResult;
  }

  /** Every prompt, following `nextCursor`. */
  listPrompts(): Promise<PromptDescriptor[]> {
    return this.all(McpMethods.promptsList.name, 'prompts');
  }

  /** One page of `prompts/list`. */
  listPromptsPage(cursor?: string): Promise<McpTestPage<PromptDescriptor>> {
    return this.page(McpMethods.promptsList.name, 'prompts', cursor);
  }

  /** Gets a prompt; arguments are strings, as the protocol sends them. */
  async getPrompt(
    name: string,
    args: Record<string, string> = {},
    options: McpTestCallOptions = {},
  ): Promise<GetPromptResult> {
    return (await this.request(
      McpMethods.promptsGet.name,
      { name, arguments: args },
      options,
    )) as unknown as GetPromptResult;
  }

  /** `completion/complete` for a prompt argument or a resource template variable. */
  async complete(
    ref: McpTestCompletionRef,
    argument: { name: string; value: string },
    context?: Record<string, string>,
  ): Promise<CompletionResult> {
    const params: JsonObject = { ref, argument };
    if (context) params.context = { arguments: context };
    return (await this.request(McpMethods.complete.name, params)).completion as CompletionResult;
  }

  /**
   * Asks for `notifications/resources/updated` of one URI on {@link notifications}:
   * `resources/subscribe` on a legacy era, a `subscriptions/listen` for it on 2026-07-28.
   */
  async subscribeResource(uri: string): Promise<void> {
    if (this.modern) await this.listen({ resourceSubscriptions: [uri] });
    else await this.request(McpMethods.resourcesSubscribe.name, { uri });
  }

  /**
   * Any request, for methods without a helper. Progress, logs and the client's answers work as
   * in {@link callTool}; a JSON-RPC error throws an {@link McpTestError}.
   */
  async request(method: string, params: JsonObject = {}, options: McpTestCallOptions = {}): Promise<Json> {
    let round = params;
    for (let rounds = 0; ; rounds++) {
      const result = await this.exchange(method, round, options);
      if (!this.modern || result.resultType !== 'input_required') return result;
      const max = this.options.maxInputRounds ?? 10;
      if (rounds + 1 >= max) {
        throw new McpTestError(
          ErrorCode.InternalError,
          `${method} still asked for input after ${max} rounds (McpTestClient's maxInputRounds): does the handler ask again for an answer it was given?`,
          result,
          method,
        );
      }
      const inputResponses: JsonObject = {};
      for (const [key, ask] of Object.entries((result.inputRequests ?? {}) as Record<string, Json>)) {
        inputResponses[key] = await clientAnswer(method, ask.method, ask.params ?? {}, options, this.options);
      }
      round = { ...params, inputResponses };
      if (result.requestState !== undefined) round.requestState = result.requestState;
    }
  }

  /** Cancels what is still running and ends the notification streams. The app stays open. */
  async close(): Promise<void> {
    for (const stream of this.streams) stream.unsubscribe();
    this.streams.clear();
    this.transport.close();
    this.changes.complete();
  }

  private async connect(): Promise<void> {
    if (this.modern) {
      const discovered = await this.request(McpMethods.discover.name);
      this.serverInfo = discovered.serverInfo ?? {};
      this.serverCapabilities = discovered.capabilities ?? {};
      this.instructions = discovered.instructions;
      if (this.serverCapabilities.tools || this.serverCapabilities.prompts || this.serverCapabilities.resources) {
        await this.listen({ toolsListChanged: true, promptsListChanged: true, resourcesListChanged: true });
      }
      return;
    }
    this.streams.add(
      this.transport.notifications.subscribe((message) => this.changes.next(message as unknown as JsonObject)),
    );
    const init = await this.exchange('initialize', {
      protocolVersion: this.protocolVersion,
      capabilities: this.capabilities(),
      clientInfo: this.clientInfo(),
    });
    if (init.protocolVersion !== this.protocolVersion) {
      throw new McpTestError(
        ErrorCode.InvalidRequest,
        `The server answered initialize with protocol version ${String(init.protocolVersion)}, not the era ${this.protocolVersion} the test asked for.`,
        init,
        'initialize',
      );
    }
    this.serverInfo = init.serverInfo ?? {};
    this.serverCapabilities = init.capabilities ?? {};
    this.instructions = init.instructions;
    await this.notify('notifications/initialized');
    if (this.serverCapabilities.logging)
      await this.exchange(McpMethods.setLogLevel.name, { level: this.options.logLevel ?? 'debug' });
  }

  /** Opens a `subscriptions/listen` stream into {@link notifications}; resolves once acknowledged. */
  private async listen(filter: JsonObject): Promise<void> {
    const send = await this.sendOptions(McpMethods.subscriptionsListen.name);
    return new Promise<void>((resolve, reject) => {
      const id = this.nextId++;
      const stream = this.transport
        .send(this.message(id, McpMethods.subscriptionsListen.name, { notifications: filter }, {}), send)
        .subscribe({
          next: (message) => {
            const m = message as Json;
            if (m.method === 'notifications/subscriptions/acknowledged') resolve();
            else if (m.method) this.changes.next(m);
            else if (m.error) reject(protocolError(m.error, McpMethods.subscriptionsListen.name));
          },
          error: reject,
          complete: () => this.streams.delete(stream),
        });
      this.streams.add(stream);
    });
  }

  private async notify(method: string): Promise<void> {
    const send = await this.sendOptions(method);
    return new Promise<void>((resolve, reject) => {
      this.transport.send({ jsonrpc: '2.0', method }, send).subscribe({ complete: resolve, error: reject });
    });
  }

  /** One request and every message of its exchange, until its response. */
  private async exchange(method: string, params: JsonObject, options: McpTestCallOptions = {}): Promise<Json> {
    const send = await this.sendOptions(method);
    const id = this.nextId++;
    return new Promise<Json>((resolve, reject) => {
      let settled = false;
      let subscription: Subscription | undefined;
      const settle = (fn: () => void): void => {
        if (settled) return;
        settled = true;
        options.signal?.removeEventListener('abort', onAbort);
        fn();
      };
      const fail = (error: unknown): void =>
        settle(() => {
          subscription?.unsubscribe();
          reject(error);
        });
      const onAbort = (): void => fail(options.signal!.reason ?? new Error(`${method} was aborted`));
      if (options.signal?.aborted) return onAbort();
      options.signal?.addEventListener('abort', onAbort, { once: true });
      subscription = this.transport.send(this.message(id, method, params, options), send).subscribe({
        next: (message) => {
          const m = message as Json;
          if (m.id === id && ('result' in m || 'error' in m)) {
            settle(() => ('error' in m ? reject(protocolError(m.error, method)) : resolve(m.result)));
          } else if (m.method === 'notifications/progress') options.onProgress?.(m.params);
          else if (m.method === 'notifications/message') options.onLog?.(m.params);
          else if (m.method !== undefined && m.id !== undefined)
            this.answerServerRequest(method, m, options).catch(fail);
        },
        error: fail,
        complete: () =>
          fail(
            new McpTestError(
              ErrorCode.InternalError,
              `The server ended ${method} without a response.`,
              undefined,
              method,
            ),
          ),
      });
      if (settled) subscription.unsubscribe();
    });
  }

  /** Legacy eras: the server asked on the call's stream; the answer goes back as a message. */
  private async answerServerRequest(call: string, request: Json, options: McpTestCallOptions): Promise<void> {
    const result = await clientAnswer(call, request.method, request.params ?? {}, options, this.options);
    this.transport
      .send({ jsonrpc: '2.0', id: request.id, result } as JsonRpcMessage, await this.sendOptions(call))
      .subscribe();
  }

  private async all<T>(method: string, key: string): Promise<T[]> {
    const items: T[] = [];
    const seen = new Set<string>();
    let cursor: string | undefined;
    for (let pages = 0; pages < MAX_PAGES; pages++) {
      const page = await this.page<T>(method, key, cursor);
      items.push(...page.items);
      if (page.nextCursor === undefined) return items;
      if (seen.has(page.nextCursor))
        throw new McpTestError(
          ErrorCode.InternalError,
          `${method} returned the cursor ${JSON.stringify(page.nextCursor)} twice.`,
          undefined,
          method,
        );
      seen.add((cursor = page.nextCursor));
    }
    throw new McpTestError(ErrorCode.InternalError, `${method} had more than ${MAX_PAGES} pages.`, undefined, method);
  }

  private async page<T>(method: string, key: string, cursor?: string): Promise<McpTestPage<T>> {
    const result = await this.request(method, cursor === undefined ? {} : { cursor });
    return {
      items: (result[key] ?? []) as T[],
      ...(typeof result.nextCursor === 'string' ? { nextCursor: result.nextCursor } : {}),
    };
  }

  private message(id: number, method: string, params: JsonObject, options: McpTestCallOptions): JsonRpcMessage {
    const meta: JsonObject = { ...options.meta };
    if (options.onProgress) meta.progressToken = `progress-${id}`;
    if (this.modern) {
      meta[META_PROTOCOL_VERSION] = this.protocolVersion;
      meta[META_CLIENT_CAPABILITIES] = this.capabilities();
      meta[META_CLIENT_INFO] = this.clientInfo();
      meta[META_LOG_LEVEL] = this.options.logLevel ?? 'debug';
    }
    const withMeta = Object.keys(meta).length > 0 ? { ...params, _meta: meta } : params;
    return { jsonrpc: '2.0', id, method, params: withMeta };
  }

  private capabilities(): JsonObject {
    return this.options.capabilities ?? DEFAULT_CAPABILITIES;
  }

  private clientInfo(): JsonObject {
    return this.options.clientInfo ?? { name: 'mcp-test-client', version: '1.0.0' };
  }
}

function protocolError(error: Json, method: string): McpTestError {
  return new McpTestError(error.code, error.message, error.data, method);
}
