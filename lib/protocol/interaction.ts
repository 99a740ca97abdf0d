import { createHash, createHmac, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import { McpError, ToolError } from './errors.js';
import { ErrorCode, type JsonRpcId, type JsonRpcMessage, type JsonRpcResponse } from './json-rpc.js';
import type { JsonObject } from './mcp-types.js';

/** A root the client exposes (`roots/list`). @publicApi */
export interface McpRoot {
  uri: string;
  name?: string;
  _meta?: JsonObject;
}

/** Parameters of `sampling/createMessage`. @publicApi */
export interface SamplingRequest {
  messages: Array<{ role: 'user' | 'assistant'; content: JsonObject | JsonObject[] }>;
  maxTokens: number;
  systemPrompt?: string;
  temperature?: number;
  stopSequences?: string[];
  modelPreferences?: JsonObject;
  includeContext?: 'none' | 'thisServer' | 'allServers';
  metadata?: JsonObject;
  tools?: JsonObject[];
  toolChoice?: JsonObject;
}

/** The client's answer to `sampling/createMessage`. @publicApi */
export interface SamplingResult {
  role: 'user' | 'assistant';
  content: JsonObject | JsonObject[];
  model: string;
  stopReason?: string;
  [key: string]: unknown;
}

const SAMPLING_ROLES = new Set(['user', 'assistant']);

/**
 * Why a client's `sampling/createMessage` answer is not a CreateMessageResult, or undefined when
 * it is one: role "user" or "assistant", model a string, stopReason (if any) a string, content a
 * sampling content block or (2025-11-25) a non-empty array of them. The reason names the field
 * and never repeats the value, so it can go into an error a handler's caller reads.
 */
export function samplingResultProblem(value: unknown): string | undefined {
  if (!isRecord(value)) return 'the result must be an object { role, content, model }';
  if (typeof value.role !== 'string' || !SAMPLING_ROLES.has(value.role)) return '"role" must be "user" or "assistant"';
  if (typeof value.model !== 'string') return '"model" must be a string';
  if (value.stopReason !== undefined && typeof value.stopReason !== 'string') return '"stopReason" must be a string';
  if (Array.isArray(value.content)) {
    if (value.content.length === 0) return '"content" must not be an empty array';
    for (const [index, block] of value.content.entries()) {
      const problem = samplingBlockProblem(block);
      if (problem) return `"content[${index}]" ${problem}`;
    }
    return undefined;
  }
  const problem = samplingBlockProblem(value.content);
  return problem ? `"content" ${problem}` : undefined;
}

function samplingBlockProblem(block: unknown): string | undefined {
  if (!isRecord(block)) return 'must be a content block (an object with a "type")';
  switch (block.type) {
    case 'text':
      return typeof block.text === 'string' ? undefined : 'is a text block without a string "text"';
    case 'image':
    case 'audio':
      return typeof block.data === 'string' && typeof block.mimeType === 'string'
        ? undefined
        : `is an ${block.type} block without string "data" and "mimeType"`;
    case 'tool_use':
      return typeof block.id === 'string' && typeof block.name === 'string' && isRecord(block.input)
        ? undefined
        : 'is a tool_use block without string "id" and "name" and an object "input"';
    case 'tool_result':
      return typeof block.toolUseId === 'string' && Array.isArray(block.content) && block.content.every(isRecord)
        ? undefined
        : 'is a tool_result block without a string "toolUseId" and a "content" array';
    default:
      return 'must have "type" "text", "image", "audio", "tool_use" or "tool_result"';
  }
}

/**
 * Why a client's `roots/list` answer is not a ListRootsResult, or undefined when it is one:
 * `roots` an array of { uri: a file:// URI, name?: string, _meta?: object }.
 */
export function rootsResultProblem(value: unknown): string | undefined {
  if (!isRecord(value) || !Array.isArray(value.roots)) return 'the result must be an object { roots: [...] }';
  for (const [index, root] of value.roots.entries()) {
    if (!isRecord(root)) return `"roots[${index}]" must be an object { uri, name? }`;
    if (typeof root.uri !== 'string' || !root.uri.startsWith('file://'))
      return `"roots[${index}].uri" must be a file:// URI string`;
    if (root.name !== undefined && typeof root.name !== 'string') return `"roots[${index}].name" must be a string`;
    if (root._meta !== undefined && !isRecord(root._meta)) return `"roots[${index}]._meta" must be an object`;
  }
  return undefined;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The outcome of an elicitation. @publicApi */
export type ElicitOutcome<T> = { action: 'accept'; content: T } | { action: 'decline' } | { action: 'cancel' };

/**
 * Thrown (as a value, not an Error, so that loggers and catch-all filters leave it alone) when a
 * modern-era handler needs input the client has not given yet.
 */
export class InputRequiredSignal {
  readonly mcpInputRequired = true;
}

export function isInputRequiredSignal(value: unknown): value is InputRequiredSignal {
  return typeof value === 'object' && value !== null && (value as InputRequiredSignal).mcpInputRequired === true;
}

/**
 * Server-to-client requests of the legacy era: the request travels on the call's SSE stream, the
 * answer arrives as a separate POST. Ids are random so that an answer can be matched without a
 * session, and cannot be guessed by another client.
 */
export class ServerRequestBroker {
  private readonly pending = new Map<
    string,
    { resolve(value: JsonObject): void; reject(error: unknown): void; owner?: string; timer: NodeJS.Timeout }
  >();

  request(
    emit: (message: JsonRpcMessage) => void,
    method: string,
    params: JsonObject,
    options: { signal: AbortSignal; timeoutMs: number; owner?: string },
  ): Promise<JsonObject> {
    const id = `srv-${randomUUID()}`;
    return new Promise<JsonObject>((resolve, reject) => {
      const cleanup = (): void => {
        clearTimeout(timer);
        this.pending.delete(id);
        options.signal.removeEventListener('abort', onAbort);
      };
      const onAbort = (): void => {
        cleanup();
        reject(options.signal.reason);
      };
      const timer = setTimeout(() => {
        cleanup();
        reject(new McpTimeoutError(method, options.timeoutMs));
      }, options.timeoutMs);
      timer.unref?.();
      if (options.signal.aborted) return onAbort();
      options.signal.addEventListener('abort', onAbort, { once: true });
      this.pending.set(id, {
        resolve: (value) => (cleanup(), resolve(value)),
        reject: (error) => (cleanup(), reject(error)),
        owner: options.owner,
        timer,
      });
      emit({ jsonrpc: '2.0', id, method, params });
    });
  }

  /** Routes a client's answer. Returns false for an unknown id (late, duplicate or forged). */
  resolve(response: JsonRpcResponse, owner?: string): boolean {
    const key = typeof response.id === 'string' ? response.id : String(response.id as JsonRpcId);
    const entry = this.pending.get(key);
    if (!entry || (entry.owner !== undefined && entry.owner !== owner)) return false;
    if ('error' in response) {
      entry.reject(
        new McpError(
          response.error.code,
          `The client answered with an error: ${response.error.message}`,
          response.error.data,
        ),
      );
    } else entry.resolve(response.result);
    return true;
  }

  get size(): number {
    return this.pending.size;
  }
}

export class McpTimeoutError extends ToolError {
  constructor(what: string, ms: number) {
    super(
      `The client did not answer "${what}" within ${ms} ms, so the call gave up. Ask again, or raise McpModule's clientRequestTimeoutMs.`,
    );
    this.name = 'McpTimeoutError';
  }
}

/** Remembers used requestState nonces so that a state cannot be replayed. */
export interface ReplayGuard {
  /** Records a nonce; false when it was already used. */
  consume(nonce: string, expiresAt: number): boolean | Promise<boolean>;
}

export class InMemoryReplayGuard implements ReplayGuard {
  private readonly used = new Map<string, number>();

  constructor(private readonly maxEntries = 100_000) {}

  consume(nonce: string, expiresAt: number): boolean {
    const now = Date.now();
    if (this.used.size >= this.maxEntries) {
      for (const [key, expiry] of this.used) {
        if (expiry <= now || this.used.size >= this.maxEntries) this.used.delete(key);
        else break;
      }
    }
    if (this.used.has(nonce)) return false;
    this.used.set(nonce, expiresAt);
    return true;
  }
}

/** What a requestState carries between rounds. */
export interface RequestStatePayload {
  /** The method and capability name the state belongs to. */
  method: string;
  name: string;
  /** Digest of the arguments, so a state cannot be moved to other arguments. */
  digest: string;
  principal?: string;
  /** Answers gathered in earlier rounds, by input key. */
  answers: JsonObject;
  round: number;
}

/**
 * Integrity-protected request state for multi-round-trip requests: HMAC-SHA256 over the payload,
 * bound to method, name, arguments and principal, expiring after a short TTL, and single-use.
 */
export class RequestStateCodec {
  constructor(
    private readonly secret: Buffer,
    private readonly ttlMs: number,
    private readonly guard: ReplayGuard,
  ) {}

  encode(payload: RequestStatePayload): string {
    const body = Buffer.from(
      JSON.stringify({ ...payload, exp: Date.now() + this.ttlMs, nonce: randomBytes(12).toString('base64url') }),
    ).toString('base64url');
    return `${body}.${this.sign(body)}`;
  }

  /** Verifies a state against the request it arrived with, or throws an McpError. */
  async decode(token: unknown, expected: Omit<RequestStatePayload, 'answers' | 'round'>): Promise<RequestStatePayload> {
    const invalid = (why: string): McpError =>
      new McpError(
        ErrorCode.InvalidParams,
        `Invalid requestState: ${why}. Retry the original request without requestState to start over.`,
      );
    if (typeof token !== 'string' || token.length > 64 * 1024)
      throw invalid('it must be the string this server returned');
    const dot = token.indexOf('.');
    if (dot <= 0) throw invalid('it is malformed');
    const body = token.slice(0, dot);
    const signature = Buffer.from(token.slice(dot + 1), 'base64url');
    const wanted = Buffer.from(this.sign(body), 'base64url');
    if (signature.length !== wanted.length || !timingSafeEqual(signature, wanted))
      throw invalid('its signature does not match (it was modified or is not from this server)');
    let payload: RequestStatePayload & { exp: number; nonce: string };
    try {
      payload = JSON.parse(Buffer.from(body, 'base64url').toString('utf8'));
    } catch {
      throw invalid('it is malformed');
    }
    if (!(payload.exp > Date.now())) throw invalid('it expired');
    if (payload.method !== expected.method || payload.name !== expected.name || payload.digest !== expected.digest) {
      throw invalid('it belongs to another request');
    }
    if ((payload.principal ?? null) !== (expected.principal ?? null)) throw invalid('it belongs to another principal');
    if (!(await this.guard.consume(payload.nonce, payload.exp))) throw invalid('it was already used');
    return payload;
  }

  private sign(body: string): string {
    return createHmac('sha256', this.secret).update(body).digest('base64url');
  }
}

/** A stable digest of JSON arguments (key order does not matter). */
export function digestArguments(value: unknown): string {
  return createHash('sha256').update(canonicalJson(value)).digest('base64url');
}

function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    return `{${Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson((value as JsonObject)[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}
