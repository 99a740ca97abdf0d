/**
 * One request sent the way each entry path of the endpoint takes it, for the abuse specs that
 * check a rule holds on every path: a 2026-07-28 request, a request on a 2025-11-25 session, and
 * the same request inside a JSON-RPC batch on a 2025-03-26 session. Sessions are opened once per
 * caller (its headers) and reused, as a real client does.
 */
import assert from 'node:assert/strict';
import { modernRpc, rpc } from './clients.js';

type Json = Record<string, any>;

/** How a request reaches the endpoint. */
export type EntryPath = 'modern' | 'legacy' | 'batch';
export const ENTRY_PATHS: readonly EntryPath[] = ['modern', 'legacy', 'batch'];

/** The protocol version each legacy path's session negotiates. */
const SESSION_VERSION: Record<Exclude<EntryPath, 'modern'>, string> = { legacy: '2025-11-25', batch: '2025-03-26' };

/** What came back: the HTTP status and the JSON-RPC response to the request (`body.result` or `body.error`). */
export interface PathAnswer {
  status: number;
  body: Json;
}

let nextId = 1;

/** Opens a legacy session with `initialize` + `notifications/initialized`; returns its id. */
export async function openSession(
  url: string,
  protocolVersion: string,
  headers: Record<string, string> = {},
  clientInfo: Json = { name: 'abuse-client', version: '1' },
): Promise<string> {
  const init = await rpc(
    url,
    {
      jsonrpc: '2.0',
      id: `init-${nextId++}`,
      method: 'initialize',
      params: { protocolVersion, capabilities: {}, clientInfo },
    },
    { headers },
  );
  assert.equal(init.status, 200, `initialize: ${init.text}`);
  const sessionId = init.headers.get('mcp-session-id');
  assert.ok(sessionId, 'initialize answers an Mcp-Session-Id');
  const versionHeader = protocolVersion >= '2025-06-18' ? { 'MCP-Protocol-Version': protocolVersion } : {};
  await rpc(
    url,
    { jsonrpc: '2.0', method: 'notifications/initialized' },
    { sessionId, headers: { ...headers, ...versionHeader } },
  );
  return sessionId;
}

/** Sends requests on every entry path of one endpoint, one session per path and caller. */
export class PathClient {
  private readonly sessions = new Map<string, Promise<string>>();

  constructor(readonly url: string) {}

  /** The session this caller (its headers) holds for a legacy path, opened on first use. */
  session(path: Exclude<EntryPath, 'modern'>, headers: Record<string, string> = {}): Promise<string> {
    const key = `${path}\n${JSON.stringify(headers)}`;
    let session = this.sessions.get(key);
    if (!session) {
      session = openSession(this.url, SESSION_VERSION[path], headers);
      this.sessions.set(key, session);
    }
    return session;
  }

  /** One request on `path`, as the caller with `headers`. */
  async call(
    path: EntryPath,
    method: string,
    params: Json = {},
    headers: Record<string, string> = {},
  ): Promise<PathAnswer> {
    const id = nextId++;
    if (path === 'modern') {
      const res = await modernRpc(this.url, method, params, { headers, id });
      return { status: res.status, body: responseTo(id, res.json, res.events) };
    }
    const sessionId = await this.session(path, headers);
    const request = { jsonrpc: '2.0', id, method, params };
    if (path === 'legacy') {
      const res = await rpc(this.url, request, {
        sessionId,
        headers: { ...headers, 'MCP-Protocol-Version': SESSION_VERSION.legacy },
      });
      return { status: res.status, body: responseTo(id, res.json, res.events) };
    }
    const res = await rpc(this.url, [request], { sessionId, headers });
    return { status: res.status, body: responseTo(id, Array.isArray(res.json) ? res.json[0] : res.json, res.events) };
  }
}

function responseTo(id: number, json: unknown, events: Array<{ data: unknown }> | undefined): Json {
  if (json !== undefined) return json as Json;
  const found = events?.map((event) => event.data as Json).find((data) => data?.id === id);
  assert.ok(found, `no response to request ${id} on the stream`);
  return found;
}
