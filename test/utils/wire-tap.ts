/**
 * A pass-through HTTP proxy in front of a test server that records what a client we did not
 * write sends: the JSON-RPC methods, the `MCP-Protocol-Version` header, the session id, and the
 * capabilities and client info it declares (in `initialize`, or in the 2026-07-28 per-request
 * `_meta`). Bytes go through unchanged (response streams are piped as they come), so the client
 * talks to the real server; the record says which era it negotiated and what it declared,
 * whatever the client's own API exposes.
 */
import { once } from 'node:events';
import { createServer, request, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Watched } from './wait.js';

type Json = Record<string, any>;

const META_CAPABILITIES = 'io.modelcontextprotocol/clientCapabilities';
const META_CLIENT_INFO = 'io.modelcontextprotocol/clientInfo';
/** A request body larger than this is forwarded but not parsed for the record. */
const PARSE_LIMIT = 1024 * 1024;

export interface TappedRequest {
  httpMethod: string;
  /** The JSON-RPC methods of the body, one per message of a batch (none for GET/DELETE). */
  methods: string[];
  /** The `MCP-Protocol-Version` header, when sent. */
  protocolVersion?: string;
  sessionId?: string;
  /** What the client declared: `initialize` capabilities, or the 2026-07-28 `_meta` ones. */
  clientCapabilities?: Json;
  clientInfo?: Json;
  /** The version an `initialize` offered. */
  offeredVersion?: string;
  status?: number;
  /** The `Mcp-Session-Id` the server's answer set (an `initialize` that opened a session). */
  answeredSessionId?: string;
}

/**
 * How each request that listed tools was made: the protocol version it carried, and what the
 * client declared for it (in its own `_meta` on 2026-07-28, or in the `initialize` that opened
 * its session). A client's side probes (a bridge's own handshake) do not list tools.
 */
export function toolListings(
  requests: TappedRequest[],
): Array<{ protocolVersion?: string; declared?: Json; offeredVersion?: string }> {
  return requests
    .filter((q) => q.methods.includes('tools/list'))
    .map((q) => {
      const opened =
        q.sessionId === undefined
          ? undefined
          : requests.find((i) => i.methods.includes('initialize') && i.answeredSessionId === q.sessionId);
      return {
        protocolVersion: q.protocolVersion,
        declared: q.clientCapabilities ?? opened?.clientCapabilities,
        offeredVersion: opened?.offeredVersion,
      };
    });
}

function record(req: IncomingMessage, body: Buffer): TappedRequest {
  const header = (name: string) => (typeof req.headers[name] === 'string' ? (req.headers[name] as string) : undefined);
  const tapped: TappedRequest = {
    httpMethod: req.method ?? '',
    methods: [],
    protocolVersion: header('mcp-protocol-version'),
    sessionId: header('mcp-session-id'),
  };
  if (body.length === 0 || body.length > PARSE_LIMIT) return tapped;
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    return tapped;
  }
  for (const message of (Array.isArray(parsed) ? parsed : [parsed]) as Json[]) {
    if (typeof message?.method !== 'string') continue;
    tapped.methods.push(message.method);
    const params = (message.params ?? {}) as Json;
    if (message.method === 'initialize') {
      tapped.offeredVersion = params.protocolVersion;
      tapped.clientCapabilities = params.capabilities;
      tapped.clientInfo = params.clientInfo;
    } else if (params._meta?.[META_CAPABILITIES] !== undefined) {
      tapped.clientCapabilities = params._meta[META_CAPABILITIES];
      tapped.clientInfo = params._meta[META_CLIENT_INFO];
    }
  }
  return tapped;
}

export class WireTap {
  /** Everything recorded since the last `clear()`, in arrival order. */
  readonly requests: TappedRequest[] = [];
  private readonly arrivals = new Watched();

  private constructor(
    private readonly server: Server,
    readonly url: string,
  ) {}

  /** Starts a tap on a free loopback port that forwards to `target` (the server's MCP URL). */
  static async start(target: string): Promise<WireTap> {
    const upstream = new URL(target);
    let tap!: WireTap;
    const server = createServer((req, res) => tap.forward(req, res, upstream));
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const { port } = server.address() as AddressInfo;
    tap = new WireTap(server, `http://127.0.0.1:${port}${upstream.pathname}`);
    return tap;
  }

  clear(): void {
    this.requests.length = 0;
  }

  /** Requests that carried one of these JSON-RPC methods. */
  carrying(...methods: string[]): TappedRequest[] {
    return this.requests.filter((r) => r.methods.some((m) => methods.includes(m)));
  }

  /** Resolves once a request carrying `method` has reached the server (waits for it, no polling). */
  arrived(method: string, what: string): Promise<void> {
    return this.arrivals.until(() => this.carrying(method).length > 0, what);
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    this.server.close();
    await once(this.server, 'close');
  }

  private forward(req: IncomingMessage, res: ServerResponse, upstream: URL): void {
    const chunks: Buffer[] = [];
    // A side that hangs up mid-exchange ends the other side; neither error may end the test process.
    req.on('error', () => res.destroy());
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const tapped = record(req, body);
      this.requests.push(tapped);
      this.arrivals.notify();
      const out = request(
        // One connection per request (no pool), so ending one exchange can never cut another.
        {
          host: upstream.hostname,
          port: upstream.port,
          method: req.method,
          path: req.url,
          headers: req.headers,
          agent: false,
        },
        (answer) => {
          tapped.status = answer.statusCode;
          const session = answer.headers['mcp-session-id'];
          if (typeof session === 'string') tapped.answeredSessionId = session;
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.on('error', () => res.destroy());
          answer.pipe(res);
        },
      );
      // A client that closes its side (an SSE stream it is done with) ends the upstream request too.
      res.on('close', () => out.destroy());
      out.on('error', () => {
        if (!res.headersSent) res.writeHead(502);
        res.end();
      });
      out.end(body);
    });
  }
}
