/**
 * Raw access to the legacy HTTP+SSE transport (protocol 2024-11-05): a GET stream read event by
 * event, and POSTs whose answers are only a status (the messages come back on the stream).
 */
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { SseParser, type SseEvent } from './sse.js';

/** A raw GET stream: its status and headers, and its events as they come. */
export interface RawStream {
  res: IncomingMessage;
  next(filter?: (event: SseEvent) => boolean): Promise<SseEvent>;
  /** Every event received so far, taken by `next` or not. */
  readonly seen: readonly SseEvent[];
  /** Runs after each chunk of events arrived (to wake a `Watched` that also looks at `seen`). */
  onEvents(listener: () => void): void;
  closed: Promise<void>;
  close(): void;
}

export function openStream(url: string, headers: Record<string, string> = {}): Promise<RawStream> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { headers: { Accept: 'text/event-stream', ...headers } }, (res) => {
      const parser = new SseParser();
      const queue: SseEvent[] = [];
      const waiting: Array<{ filter: (e: SseEvent) => boolean; resolve: (e: SseEvent) => void }> = [];
      const seen: SseEvent[] = [];
      const listeners: Array<() => void> = [];
      const closed = new Promise<void>((done) => res.once('close', done));
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        for (const event of parser.push(chunk)) {
          seen.push(event);
          const index = waiting.findIndex((w) => w.filter(event));
          if (index >= 0) waiting.splice(index, 1)[0]!.resolve(event);
          else queue.push(event);
        }
        for (const listener of listeners) listener();
      });
      resolve({
        res,
        closed,
        close: () => req.destroy(),
        seen,
        onEvents: (listener) => void listeners.push(listener),
        next: (filter = () => true) => {
          const index = queue.findIndex(filter);
          if (index >= 0) return Promise.resolve(queue.splice(index, 1)[0]!);
          return new Promise<SseEvent>((done, fail) => {
            const timer = setTimeout(
              () => fail(new Error('no matching event on the legacy SSE stream within 60 s')),
              60_000,
            );
            waiting.push({ filter, resolve: (e) => (clearTimeout(timer), done(e)) });
          });
        },
      });
    });
    req.on('error', reject);
    req.end();
  });
}

/** POSTs `body` (JSON, or a string sent as is). */
export function post(
  url: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: IncomingMessage['headers']; text: string }> {
  return new Promise((resolve, reject) => {
    const payload = typeof body === 'string' ? body : JSON.stringify(body);
    const req = httpRequest(
      url,
      {
        method: 'POST',
        headers: {
          'Content-Type': 'application/json',
          'Content-Length': String(Buffer.byteLength(payload)),
          ...headers,
        },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, text }));
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

/** An initialized 2024-11-05 session on a raw stream: where to POST, and its stream. */
export interface RawSseSession {
  stream: RawStream;
  /** The absolute messages URL the endpoint event named. */
  messages: string;
  /** POSTs a request and resolves to the answer the stream carries for its id. */
  request(id: string | number, method: string, params?: Record<string, unknown>): Promise<SseEvent>;
}

/** Opens the stream at `<base>/sse`, then initializes the session it is (2024-11-05) with `headers` on every request. */
export async function openSseSession(
  base: string,
  headers: Record<string, string> = {},
  capabilities: Record<string, unknown> = {},
): Promise<RawSseSession> {
  const stream = await openStream(`${base}/sse`, headers);
  if (stream.res.statusCode !== 200) throw new Error(`GET ${base}/sse answered ${stream.res.statusCode}`);
  const endpoint = await stream.next((e) => e.event === 'endpoint');
  const messages = new URL(endpoint.rawData, base).href;
  const request = async (
    id: string | number,
    method: string,
    params: Record<string, unknown> = {},
  ): Promise<SseEvent> => {
    const answer = stream.next((e) => (e.data as { id?: unknown } | undefined)?.id === id);
    const posted = await post(messages, { jsonrpc: '2.0', id, method, params }, headers);
    if (posted.status !== 202) throw new Error(`POST ${method} answered ${posted.status}: ${posted.text}`);
    return answer;
  };
  await request('initialize', 'initialize', {
    protocolVersion: '2024-11-05',
    capabilities,
    clientInfo: { name: 'raw-sse', version: '1' },
  });
  const initialized = await post(messages, { jsonrpc: '2.0', method: 'notifications/initialized' }, headers);
  if (initialized.status !== 202) throw new Error(`notifications/initialized answered ${initialized.status}`);
  return { stream, messages, request };
}
