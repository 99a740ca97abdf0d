/** A local test key: fine for a sample, never for production (use your IdP's JWKS). */
export const TEST_JWT_SECRET = 'sample-05-local-test-key-do-not-use-in-production';
export const TEST_ISSUER = 'https://auth.example.test';

/** The MCP server's canonical URI: tokens must carry it as their audience. */
export function resourceUri(): string {
  const host = process.env.HOST ?? '127.0.0.1';
  const port = process.env.PORT ?? '3000';
  return process.env.MCP_RESOURCE ?? `http://${host}:${port}/mcp`;
}
