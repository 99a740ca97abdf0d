import type { RequestEnvelope } from '../protocol/context.js';
import {
  ErrorCode,
  classifyMessage,
  failure,
  isResponse,
  type JsonRpcFailure,
  type JsonRpcMessage,
  type JsonRpcNotification,
  type JsonRpcRequest,
} from '../protocol/json-rpc.js';
import type { McpDispatcher } from '../protocol/dispatcher.js';
import type { McpRefusal } from './sink.js';

export interface BatchSteps {
  /** The batch's envelope (its session), or the refusal. */
  envelope(): Promise<RequestEnvelope | McpRefusal>;
  /** The scope decision for every request, before any runs. */
  authorize(requests: readonly JsonRpcRequest[]): McpRefusal | undefined;
  notification(message: JsonRpcNotification, envelope: RequestEnvelope): void;
  /** A member's in-flight slot (a release to run when it settles), or its refusal. */
  admit?(request: JsonRpcRequest, envelope: RequestEnvelope): (() => void) | JsonRpcFailure;
}

/** What a batch answers: the array of responses, nothing (only notifications), or a refusal. */
export type BatchOutcome = { responses: JsonRpcMessage[] } | McpRefusal;

const refuse = (message: string): McpRefusal => ({
  status: 400,
  body: failure(null, ErrorCode.InvalidRequest, message),
});

/**
 * A JSON-RPC batch (2025-03-26 and older clients only): bounded by `limits.maxBatchLength`,
 * refused whole when one request lacks its scopes, and answered once every request settled.
 */
export async function runBatch(
  server: McpDispatcher,
  items: unknown[],
  maxBatchLength: number,
  steps: BatchSteps,
): Promise<BatchOutcome> {
  if (items.length === 0) return refuse('Invalid Request: an empty batch.');
  if (items.length > maxBatchLength) {
    return refuse(
      `Invalid Request: the batch has ${items.length} messages; at most ${maxBatchLength} are accepted (McpModule option limits.maxBatchLength). Split it into smaller batches or raise limits.maxBatchLength.`,
    );
  }
  const context = await steps.envelope();
  if ('status' in context) return context;
  // On a session this is the negotiated version (the envelope refuses a header that differs).
  const version = context.protocolVersion;
  if (version > '2025-03-26') {
    return refuse(
      `Invalid Request: JSON-RPC batches are only accepted from 2025-03-26 (and older) clients (this ${context.session ? 'session negotiated' : 'request speaks'} ${version}). Send one message per POST.`,
    );
  }
  const classified = items.map((item) => classifyMessage(item));
  const requests = classified.flatMap((parsed) =>
    parsed.kind === 'request' && parsed.message.method !== 'initialize' ? [parsed.message] : [],
  );
  const refusal = steps.authorize(requests);
  if (refusal) return refusal;
  const responses: JsonRpcMessage[] = [];
  const pending: Array<Promise<void>> = [];
  for (const parsed of classified) {
    if (parsed.kind === 'invalid') {
      responses.push(failure(parsed.id, ErrorCode.InvalidRequest, `Invalid Request: ${parsed.reason}`));
    } else if (parsed.kind === 'notification') {
      steps.notification(parsed.message, context);
    } else if (parsed.kind === 'request') {
      if (parsed.message.method === 'initialize') {
        responses.push(
          failure(
            parsed.message.id,
            ErrorCode.InvalidRequest,
            'Invalid Request: initialize must not be part of a batch.',
          ),
        );
        continue;
      }
      const admitted = steps.admit?.(parsed.message, context);
      if (admitted !== undefined && typeof admitted !== 'function') {
        responses.push(admitted);
        continue;
      }
      pending.push(
        new Promise<void>((resolve) => {
          const settle = (): void => (admitted?.(), resolve());
          server.handle(parsed.message, context).subscribe({
            next: (m) => isResponse(m) && responses.push(m),
            complete: settle,
            error: settle,
          });
        }),
      );
    }
  }
  await Promise.all(pending);
  return { responses };
}
