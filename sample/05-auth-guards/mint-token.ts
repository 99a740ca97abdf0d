import jwt from 'jsonwebtoken';
import { TEST_ISSUER, TEST_JWT_SECRET, resourceUri } from './auth.constants.js';

/** Signs a test token for sample 05. Usage: node dist/sample/05-auth-guards/mint-token.js <user> [role] [scopes...] */
export function mintToken(
  sub: string,
  roles: string[],
  scopes: string[],
  audience = resourceUri(),
  expiresIn = 3600,
): string {
  return jwt.sign({ scope: scopes.join(' '), roles }, TEST_JWT_SECRET, {
    algorithm: 'HS256',
    subject: sub,
    issuer: TEST_ISSUER,
    audience,
    expiresIn,
  });
}

if (process.argv[1]?.endsWith('mint-token.js')) {
  const [sub = 'alice', role = 'user', ...scopes] = process.argv.slice(2);
  console.log(mintToken(sub, [role], scopes.length ? scopes : ['invoices:read', 'invoices:write']));
}
