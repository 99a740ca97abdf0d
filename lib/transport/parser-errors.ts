import { ErrorCode } from '../protocol/json-rpc.js';
import { BodyRefusals, type BodyRefusal } from './body-refusals.js';

/**
 * The JSON-RPC error a body-parser failure is (raised by the app's parser before any MCP code),
 * or undefined when it is none of the parser's.
 */
export function parserErrorOutcome(
  error: { type?: string; status?: number; body?: unknown; limit?: number; message?: string },
  contentEncoding: string | undefined,
  maxBodyBytes: number,
): BodyRefusal | undefined {
  if (error.type === 'entity.parse.failed') {
    // A strict JSON parser also refuses valid JSON that is not an object or array.
    return typeof error.body === 'string' && isJson(error.body) ? BodyRefusals.notAMessage() : BodyRefusals.notJson();
  }
  if (error.type === 'entity.too.large' || error.status === 413) {
    return BodyRefusals.overFrameworkLimit(
      "the app's JSON body-parser limit",
      error.limit,
      "app.useBodyParser('json', { limit }) (Express)",
      maxBodyBytes,
    );
  }
  if (error.type === 'charset.unsupported' || error.type === 'encoding.unsupported') {
    return {
      ok: false,
      status: 415,
      code: ErrorCode.InvalidRequest,
      message: 'Unsupported body encoding: send UTF-8 JSON.',
    };
  }
  // A decompression failure (zlib/brotli) carries no body-parser type, only the codec's message.
  const encoding = contentEncoding?.trim().toLowerCase();
  if (error.type === undefined && error.status === 400 && encoding !== undefined && encoding !== 'identity') {
    return BodyRefusals.undecodable(encoding, error.message ?? 'invalid data');
  }
  return undefined;
}

function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}
