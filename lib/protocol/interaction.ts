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
      entry.reject(new McpError(response.error.code, `The client answered with an error: ${response.error.message}`, response.error.data));
    } else entry.resolve(response.result);
    return true;
  }

  get size(): number {
    return this.pending.size;
  }
}

export class McpTimeoutError extends ToolError {
  constructor(what: string, ms: number) {
    super(`The client did not answer "${what}" within ${ms} ms, so the call gave up. Ask again, or raise McpModule's clientRequestTimeoutMs.`);
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
      new McpError(ErrorCode.InvalidParams, `Invalid requestState: ${why}. Retry the original request without requestState to start over.`);
    if (typeof token !== 'string' || token.length > 64 * 1024) throw invalid('it must be the string this server returned');
    const dot = token.indexOf('.');
    if (dot <= 0) throw invalid('it is malformed');
    const body = token.slice(0, dot);
    const signature = Buffer.from(token.slice(dot + 1), 'base64url');
    const wanted = Buffer.from(this.sign(body), 'base64url');
    if (signature.length !== wanted.length || !timingSafeEqual(signature, wanted)) throw invalid('its signature does not match (it was modified or is not from this server)');
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
