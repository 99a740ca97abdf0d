import type { ServerResponse } from 'node:http';
import type { McpAnswerHeaders, McpEventSink, McpResponseSink } from '../engine/sink.js';
import type { JsonRpcMessage } from '../protocol/json-rpc.js';
import { serializeMessage } from '../protocol/serialize.js';
import { SSE_HEADERS, holdBytes, limitSseBuffer, writeFlushed } from './sse.js';

/**
 * The engine's response sink on a Node `ServerResponse`: JSON bodies with their length, SSE
 * streams (every write through {@link writeFlushed}, so the buffer cap holds), and 'close' as the
 * client going away. Shared by every HTTP adapter (Express, Fastify's raw reply, plain node:http).
 */
export class NodeResponseSink implements McpResponseSink {
  constructor(
    private readonly res: ServerResponse,
    /** `limits.sseBufferBytes`, applied when the answer becomes a stream (a JSON answer needs no cap). */
    private readonly sseBufferBytes?: number,
  ) {}

  get started(): boolean {
    return this.res.headersSent;
  }

  json(status: number, body: JsonRpcMessage | readonly JsonRpcMessage[], headers?: McpAnswerHeaders): void {
    const payload = Array.isArray(body) ? JSON.stringify(body) : serializeMessage(body as JsonRpcMessage);
    const length = Buffer.byteLength(payload);
    this.res.writeHead(
      status,
      headers === undefined
        ? { 'Content-Type': 'application/json', 'Content-Length': length }
        : { ...headers, 'Content-Type': 'application/json', 'Content-Length': length },
    );
    this.res.end(payload);
  }

  empty(status: number, headers?: McpAnswerHeaders): void {
    this.res.writeHead(status, headers).end();
  }

  stream(headers?: McpAnswerHeaders): McpEventSink {
    if (this.sseBufferBytes !== undefined) limitSseBuffer(this.res, this.sseBufferBytes);
    return new NodeEventSink(this.res, headers);
  }

  onClose(listener: () => void): void {
    // A response closes once: `on` spares the wrapper `once` allocates per call.
    this.res.on('close', listener);
  }
}

/** One SSE response. */
class NodeEventSink implements McpEventSink {
  private primed = false;

  constructor(
    private readonly res: ServerResponse,
    headers: McpAnswerHeaders | undefined,
  ) {
    res.writeHead(200, { ...SSE_HEADERS, ...headers });
    // Headers go out at once unless a priming event follows right away and carries them.
    queueMicrotask(() => {
      if (!this.primed && !res.writableEnded && !res.destroyed) res.flushHeaders();
    });
  }

  get ended(): boolean {
    return this.res.writableEnded || this.res.destroyed;
  }

  event(data: string, id?: string): boolean {
    return writeFlushed(
      this.res,
      id === undefined ? `event: message\ndata: ${data}\n\n` : `id: ${id}\nevent: message\ndata: ${data}\n\n`,
    );
  }

  hold(bytes: number): boolean {
    return holdBytes(this.res, bytes);
  }

  prime(id: string, retryMs: number): void {
    this.primed = true;
    writeFlushed(this.res, `id: ${id}\nretry: ${retryMs}\ndata: \n\n`);
  }

  comment(): void {
    if (!this.res.writableEnded) writeFlushed(this.res, ':\n\n');
  }

  retry(retryMs: number): void {
    if (!this.res.writableEnded) writeFlushed(this.res, `retry: ${retryMs}\n\n`);
  }

  end(): void {
    if (!this.res.writableEnded) this.res.end();
  }

  onClose(listener: () => void): void {
    this.res.once('close', listener);
  }
}
