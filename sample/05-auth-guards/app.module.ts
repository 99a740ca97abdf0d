import { Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { PassportModule } from '@nestjs/passport';
import { McpModule, principalFromUser } from 'nestjs-model-context';
import { TEST_ISSUER, resourceUri } from './auth.constants.js';
import { JwtAuthGuard } from './guards.js';
import { InvoiceTools } from './invoices.tools.js';
import { JwtStrategy } from './jwt.strategy.js';
import { AuditService } from './support.js';

@Module({
  imports: [
    PassportModule,
    McpModule.forRoot({
      name: 'invoices',
      version: '1.0.0',
      auth: {
        resource: resourceUri(),
        authorizationServers: [TEST_ISSUER],
        scopesSupported: ['invoices:read', 'invoices:write'],
        // The app's own passport guard authenticated the request; read its user.
        principalFrom: (request) => {
          const user = (request as { user?: { sub: string; scope: string; roles: string[] } }).user;
          const principal = principalFromUser(user);
          return principal && { ...principal, claims: { roles: user?.roles ?? [] } };
        },
      },
    }),
  ],
  providers: [JwtStrategy, InvoiceTools, AuditService, { provide: APP_GUARD, useClass: JwtAuthGuard }],
})
export class AppModule {}
