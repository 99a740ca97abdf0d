export default () => ({
  port: parseInt(process.env.PORT ?? '3000', 10),
  /** Where clients reach the API: the MCP endpoint's OAuth resource is `${publicUrl}/api/mcp`. */
  publicUrl: process.env.PUBLIC_URL ?? 'http://localhost:3000',
  database: {
    path: process.env.DATABASE_PATH ?? ':memory:',
  },
  jwt: {
    secret: process.env.JWT_SECRET ?? 'change-me-in-production',
    /** Seconds. */
    expiresIn: parseInt(process.env.JWT_EXPIRES_IN ?? '3600', 10),
  },
  throttle: {
    ttl: 60_000,
    limit: parseInt(process.env.THROTTLE_LIMIT ?? '1000', 10),
  },
});
