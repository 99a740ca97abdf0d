import { Module, type DynamicModule } from '@nestjs/common';
import { McpModule } from 'nestjs-model-context';
import { NotesTools } from './notes.tools.js';

export const SCOPES = ['notes:read', 'notes:write'];

/**
 * An MCP endpoint whose tokens McpModule verifies itself: JWT access tokens against the issuer's
 * JWKS (discovered from its metadata), audience = this endpoint's URL (RFC 8707), DPoP-bound
 * tokens checked against their proofs (RFC 9449), with server nonces.
 */
@Module({})
export class AppModule {
  static forIssuer(issuer: string, resource: string): DynamicModule {
    return {
      module: AppModule,
      imports: [
        McpModule.forRoot({
          name: 'notes',
          version: '1.0.0',
          auth: {
            resource,
            authorizationServers: [issuer],
            scopesSupported: SCOPES,
            jwt: {},
            // Server nonces: a proof is fresh by this server's clock, not the agent's.
            dpop: { nonce: true },
          },
        }),
      ],
      providers: [NotesTools],
    };
  }
}
