import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { Module, UseGuards } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { PassportModule } from '@nestjs/passport';
import { McpModule, principalFromUser } from 'nestjs-model-context';
import { McpClientModule, McpMountModule } from 'nestjs-model-context/client';
import { TEST_ISSUER, resourceUri } from '../05-auth-guards/auth.constants.js';
import { JwtAuthGuard, Roles, RolesGuard } from '../05-auth-guards/guards.js';
import { JwtStrategy } from '../05-auth-guards/jwt.strategy.js';

/** The official reference server, run from node_modules (`npx @modelcontextprotocol/server-everything` in an app). */
const everything = join(
  dirname(createRequire(import.meta.url).resolve('@modelcontextprotocol/server-everything/package.json')),
  'dist/index.js',
);

/**
 * A governed MCP gateway: one endpoint behind the app's bearer auth, fronting the official
 * reference server (a stdio child) and sample 02's reports server (Streamable HTTP, at
 * REPORTS_URL). Every mounted call runs through this app's guards, scopes, throttles, events and
 * traces first; the reports tools need the `analyst` role.
 */
@Module({
  imports: [
    PassportModule,
    McpModule.forRoot({
      name: 'gateway',
      version: '1.0.0',
      auth: {
        resource: resourceUri(),
        authorizationServers: [TEST_ISSUER],
        principalFrom: (request) => {
          const user = (request as { user?: { sub: string; scope: string; roles: string[] } }).user;
          const principal = principalFromUser(user);
          return principal && { ...principal, claims: { roles: user?.roles ?? [] } };
        },
      },
    }),
    McpClientModule.forRoot({
      clients: [
        // The child gets only the official client's safe environment: never this app's secrets.
        {
          name: 'everything',
          transport: { type: 'stdio', command: process.execPath, args: [everything, 'stdio'], stderr: 'ignore' },
        },
        { name: 'reports', transport: { type: 'http', url: process.env.REPORTS_URL ?? 'http://127.0.0.1:3002/mcp' } },
      ],
    }),
    McpMountModule.forRoot({
      mounts: [
        // get-env would show the child's environment: it is not mounted, so no path reaches it.
        { client: 'everything', prefix: 'everything_', exclude: ['get-env'] },
        { client: 'reports', prefix: 'reports_', decorators: [UseGuards(RolesGuard), Roles('analyst')] },
      ],
    }),
  ],
  providers: [JwtStrategy, RolesGuard, { provide: APP_GUARD, useClass: JwtAuthGuard }],
})
export class AppModule {}
