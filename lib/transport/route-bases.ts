import { VERSION_NEUTRAL, VersioningType } from '@nestjs/common';
import type { ApplicationConfig } from '@nestjs/core';
import type { McpEndpointVersion } from './endpoint-version.js';

/**
 * The path prefixes the endpoint's controller gets from the app: the global prefix, then each URI
 * version of `endpointVersion` (none when version-neutral or under another versioning type),
 * versioned ones first.
 */
export function routeBases(config: ApplicationConfig | undefined, version: McpEndpointVersion): string[] {
  const prefix = trim(config?.getGlobalPrefix?.() ?? '');
  const versioning = config?.getVersioning?.();
  const versions = (Array.isArray(version) ? version : [version])
    .slice()
    .sort((a, b) => Number(a === VERSION_NEUTRAL) - Number(b === VERSION_NEUTRAL));
  const bases = new Set<string>();
  for (const v of versions) {
    const segment =
      versioning?.type === VersioningType.URI && v !== VERSION_NEUTRAL && typeof v === 'string'
        ? `${versioning.prefix === false ? '' : (versioning.prefix ?? 'v')}${v}`
        : '';
    bases.add(['', prefix, segment].filter((s, i) => i === 0 || s !== '').join('/'));
  }
  return [...bases];
}

function trim(segment: string): string {
  return segment.replace(/^\/+|\/+$/g, '');
}
