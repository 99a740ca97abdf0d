import { ErrorCode } from '../protocol/json-rpc.js';
import type { McpBodyOutcome } from '../engine/sink.js';

/** A body refused before it became a message: the HTTP status and the JSON-RPC error it answers. */
export type BodyRefusal = McpBodyOutcome & { ok: false };

const refuse = (status: number, code: number, message: string): BodyRefusal => ({ ok: false, status, code, message });

/**
 * The refusals of a request body, written once for every HTTP adapter: Express's body parser,
 * Fastify's content-type parser and the handler's own reading meet the same client mistakes and
 * must answer them alike.
 */
export const BodyRefusals = {
  notJson: (): BodyRefusal => refuse(400, ErrorCode.ParseError, 'Parse error: the request body is not valid JSON.'),
  empty: (): BodyRefusal =>
    refuse(
      400,
      ErrorCode.ParseError,
      'Parse error: the request body is empty; send one JSON-RPC message (or, for 2025-03-26 sessions, a batch) as JSON.',
    ),
  notAMessage: (): BodyRefusal =>
    refuse(400, ErrorCode.InvalidRequest, 'Invalid Request: a JSON-RPC message must be a JSON object.'),
  undecodable: (encoding: string, detail: string): BodyRefusal =>
    refuse(
      400,
      ErrorCode.ParseError,
      `Parse error: the request body could not be decoded with Content-Encoding "${encoding}" (${detail}). Send it compressed with that encoding, or uncompressed without the header.`,
    ),
  notJsonContentType: (got: string | undefined): BodyRefusal =>
    refuse(
      415,
      ErrorCode.InvalidRequest,
      `Unsupported Media Type: an MCP POST body is JSON; send it with "Content-Type: application/json" (got ${JSON.stringify(got ?? 'none')}).`,
    ),
  /** The framework's own limit refused the body before McpModule saw it: that limit is the one to raise. */
  overFrameworkLimit: (
    what: string,
    limit: number | undefined,
    howToRaise: string,
    maxBodyBytes: number,
  ): BodyRefusal =>
    refuse(
      413,
      ErrorCode.InvalidRequest,
      `Payload Too Large: the request body exceeds ${what} of ${typeof limit === 'number' ? `${limit} bytes` : 'its limit'}. Raise it with ${howToRaise} when creating the Nest app; McpModule's own maxBodyBytes (${maxBodyBytes} bytes) applies after it.`,
    ),
  overMaxBodyBytes: (maxBodyBytes: number): BodyRefusal =>
    refuse(
      413,
      ErrorCode.InvalidRequest,
      `Payload Too Large: the request body exceeds ${maxBodyBytes} bytes, McpModule's maxBodyBytes limit. Raise McpModule.forRoot({ maxBodyBytes }) to accept it.`,
    ),
} as const;
