const BASE64_SENTINEL = /^=\?base64\?([A-Za-z0-9+/]*={0,2})\?=$/;
const HEADER_VALUE = /^[\t\x20-\x7e]*$/;

/**
 * Decodes an `Mcp-Name` / `Mcp-Param-*` header value (2026-07-28): plain visible ASCII, trimmed,
 * or the `=?base64?…?=` sentinel holding UTF-8. Malformed values are refused, never guessed.
 */
export function decodeHeaderValue(raw: string): { ok: true; value: string } | { ok: false } {
  if (!HEADER_VALUE.test(raw)) return { ok: false };
  const trimmed = raw.trim();
  // Only a value wrapped in both `=?base64?` and `?=` is encoded; anything else (even with the
  // prefix alone) is a literal, as SEP-2243 says.
  const wrapped = trimmed.length >= '=?base64??='.length && trimmed.startsWith('=?base64?') && trimmed.endsWith('?=');
  if (!wrapped) return { ok: true, value: trimmed };
  const match = BASE64_SENTINEL.exec(trimmed);
  if (!match || match[1].length % 4 !== 0) return { ok: false };
  const bytes = Buffer.from(match[1], 'base64');
  const text = new TextDecoder('utf-8', { fatal: false }).decode(bytes);
  if (text.includes('\uFFFD') || Buffer.byteLength(text) !== bytes.length) return { ok: false };
  return { ok: true, value: text };
}
