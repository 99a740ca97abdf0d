import type { Subscription } from 'rxjs';
import type { JsonRpcMessage } from '../protocol/json-rpc.js';
import { McpInProcessTransport } from '../transport/in-process.transport.js';
import type { INestApplicationContext } from '@nestjs/common';

type Message = Record<string, any>;

/**
 * The official client's `Transport` over the testing kit's in-process transport: each request is
 * one exchange of the engine, its progress, logs and server requests delivered as they come;
 * `notifications/cancelled` from the client ends the exchange, which cancels the handler.
 */
export class InProcessClientTransport {
  onmessage?: (message: Message) => void;
  onclose?: () => void;
  onerror?: (error: Error) => void;
  sessionId?: string;

  private readonly inner: McpInProcessTransport;
  private readonly calls = new Map<unknown, Subscription>();
  private standing?: Subscription;
  private closed = false;

  constructor(app: INestApplicationContext) {
    this.inner = McpInProcessTransport.forApp(app);
  }

  async start(): Promise<void> {
    this.standing = this.inner.notifications.subscribe((message) => this.onmessage?.(message as Message));
  }

  async send(message: Message): Promise<void> {
    if (this.closed) throw new Error('The in-process MCP transport is closed.');
    if (message.method === 'notifications/cancelled') {
      const call = this.calls.get(message.params?.requestId);
      if (call) {
        this.calls.delete(message.params.requestId);
        call.unsubscribe();
        return;
      }
    }
    const isRequest = typeof message.method === 'string' && message.id !== undefined;
    const subscription = this.inner.send(message as JsonRpcMessage).subscribe({
      next: (out) => this.onmessage?.(out as Message),
      error: (error: unknown) => this.onerror?.(error instanceof Error ? error : new Error(String(error))),
      complete: () => {
        if (isRequest) this.calls.delete(message.id);
      },
    });
    if (isRequest && !subscription.closed) this.calls.set(message.id, subscription);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const call of this.calls.values()) call.unsubscribe();
    this.calls.clear();
    this.standing?.unsubscribe();
    this.inner.close();
    this.onclose?.();
  }
}
