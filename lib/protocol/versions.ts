/**
 * Protocol revisions that open with `initialize` and may use sessions, newest first. 2024-11-05
 * is kept because older SDK clients still offer it over Streamable HTTP.
 */
export const LEGACY_PROTOCOL_VERSIONS = ['2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05'] as const;
/** Stateless revisions that carry their version in every request's `_meta`. */
export const MODERN_PROTOCOL_VERSIONS = ['2026-07-28'] as const;
export const LATEST_LEGACY_VERSION = LEGACY_PROTOCOL_VERSIONS[0];
export const FIRST_MODERN_VERSION = '2026-07-28';
/** The version a legacy request without `MCP-Protocol-Version` is assumed to speak. */
export const DEFAULT_LEGACY_VERSION = '2025-03-26';

export type ProtocolEra = 'legacy' | 'modern';

export const META_PROTOCOL_VERSION = 'io.modelcontextprotocol/protocolVersion';
export const META_CLIENT_CAPABILITIES = 'io.modelcontextprotocol/clientCapabilities';
export const META_CLIENT_INFO = 'io.modelcontextprotocol/clientInfo';
export const META_LOG_LEVEL = 'io.modelcontextprotocol/logLevel';
export const META_SERVER_INFO = 'io.modelcontextprotocol/serverInfo';
export const META_SUBSCRIPTION_ID = 'io.modelcontextprotocol/subscriptionId';

const legacy = new Set<string>(LEGACY_PROTOCOL_VERSIONS);
const modern = new Set<string>(MODERN_PROTOCOL_VERSIONS);
const DATE_VERSION = /^\d{4}-\d{2}-\d{2}$/;

export function isSupportedLegacyVersion(version: string): boolean {
  return legacy.has(version);
}

export function isSupportedModernVersion(version: string): boolean {
  return modern.has(version);
}

/** True for any version string dated at or after the first stateless revision. */
export function isModernVersionString(version: string): boolean {
  return DATE_VERSION.test(version) && version >= FIRST_MODERN_VERSION;
}

/**
 * `initialize` negotiation: echo a legacy version we serve, otherwise offer our latest legacy
 * version (also for "2026-07-28", which has no handshake).
 */
export function negotiateLegacyVersion(requested: unknown): string {
  return typeof requested === 'string' && legacy.has(requested) ? requested : LATEST_LEGACY_VERSION;
}

/** Priming events crash clients older than 2025-11-25 (they JSON.parse an empty data line). */
export function supportsPrimingEvents(version: string): boolean {
  return version >= '2025-11-25';
}

/** Methods served the same way on both eras. */
export const BOTH_ERAS: readonly ProtocolEra[] = ['legacy', 'modern'];
