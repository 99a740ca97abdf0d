import assert from 'node:assert/strict';
import { rpc, type RpcResult } from './clients.js';

/** A JSON-RPC answer as a test reads it. */
export interface RpcAnswer {
  id?: unknown;
  result?: Record<string, unknown>;
  error?: { code: number; message: string; data?: unknown };
}

/** The answer to request `id` in a reply, whether the server answered with JSON or on an SSE stream. */
export function answerTo(reply: RpcResult, id: unknown): RpcAnswer {
  const messages = reply.json !== undefined ? [reply.json].flat() : (reply.events ?? []).map((event) => event.data);
  const answer = messages.find((message) => (message as RpcAnswer | undefined)?.id === id);
  assert.ok(
    answer,
    `no answer to request ${String(id)} in the reply (HTTP ${reply.status}): ${reply.text.slice(0, 500)}`,
  );
  return answer as RpcAnswer;
}

/**
 * A client of the initialize-based era speaking raw JSON-RPC: on its own session, or on none (a
 * stateless server). Every request carries `headers` (a token, an X-Forwarded-For).
 */
export class LegacyCaller {
  private nextId = 1;

  private constructor(
    readonly url: string,
    readonly sessionId: string | undefined,
    readonly protocolVersion: string,
    private readonly headers: Record<string, string>,
  ) {}

  /** Initializes (then notifications/initialized); a stateless server answers with no session. */
  static async open(
    url: string,
    options: {
      clientName?: string;
      headers?: Record<string, string>;
      protocolVersion?: string;
      capabilities?: Record<string, unknown>;
      stateless?: boolean;
    } = {},
  ): Promise<LegacyCaller> {
    const protocolVersion = options.protocolVersion ?? '2025-11-25';
    const clientName = options.clientName ?? 'raw-legacy-client';
    const headers = options.headers ?? {};
    const init = await rpc(
      url,
      {
        jsonrpc: '2.0',
        id: `initialize-${clientName}`,
        method: 'initialize',
        params: {
          protocolVersion,
          capabilities: options.capabilities ?? {},
          clientInfo: { name: clientName, version: '1' },
        },
      },
      { headers },
    );
    assert.equal(init.status, 200, init.text);
    const sessionId = init.headers.get('mcp-session-id') ?? undefined;
    if (!options.stateless) assert.ok(sessionId, 'initialize answers an Mcp-Session-Id');
    await rpc(
      url,
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      { sessionId, headers: { ...headers, 'MCP-Protocol-Version': protocolVersion } },
    );
    return new LegacyCaller(url, sessionId, protocolVersion, headers);
  }

  /** One request; resolves with its answer. */
  async call(method: string, params: Record<string, unknown> = {}): Promise<RpcAnswer> {
    const id = this.nextId++;
    return answerTo(await this.send({ jsonrpc: '2.0', id, method, params }), id);
  }

  /** One JSON-RPC batch (2025-03-26 sessions); resolves with the answers in request order. */
  async batch(requests: Array<{ method: string; params?: Record<string, unknown> }>): Promise<RpcAnswer[]> {
    const messages = requests.map(({ method, params }) => ({
      jsonrpc: '2.0',
      id: this.nextId++,
      method,
      params: params ?? {},
    }));
    const reply = await this.send(messages, { stopAtResponse: false });
    return messages.map((message) => answerTo(reply, message.id));
  }

  private send(body: unknown, options: { stopAtResponse?: boolean } = {}): Promise<RpcResult> {
    return rpc(this.url, body, {
      sessionId: this.sessionId,
      headers: { ...this.headers, 'MCP-Protocol-Version': this.protocolVersion },
      ...options,
    });
  }
}

/**
 * Opens a legacy session the raw way (initialize, then notifications/initialized) and returns its
 * id: 2025-11-25 unless `protocolVersion` says otherwise (2025-03-26 for batches), with `headers`
 * (a bearer token) on both requests.
 */
export async function legacySession(
  url: string,
  clientName: string,
  options: { headers?: Record<string, string>; protocolVersion?: string } = {},
): Promise<string> {
  return (await LegacyCaller.open(url, { clientName, ...options })).sessionId!;
}

/** One request on a legacy session, with its version header. */
export function legacyRequest(
  url: string,
  sessionId: string,
  id: string | number,
  method: string,
  params: Record<string, unknown> = {},
  version = '2025-11-25',
): Promise<RpcResult> {
  return rpc(url, { jsonrpc: '2.0', id, method, params }, { sessionId, headers: { 'MCP-Protocol-Version': version } });
}
