import { Injectable } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
import { ExtractJwt, Strategy } from 'passport-jwt';
import { TEST_ISSUER, TEST_JWT_SECRET, resourceUri } from './auth.constants.js';

export interface JwtUser {
  sub: string;
  scope: string;
  roles: string[];
}

/** An ordinary passport-jwt strategy: nothing MCP-specific. The audience check binds tokens to this server. */
@Injectable()
export class JwtStrategy extends PassportStrategy(Strategy) {
  constructor() {
    super({
      jwtFromRequest: ExtractJwt.fromAuthHeaderAsBearerToken(),
      secretOrKey: TEST_JWT_SECRET,
      issuer: TEST_ISSUER,
      audience: resourceUri(),
      algorithms: ['HS256'],
    });
  }

  validate(payload: { sub: string; scope?: string; roles?: string[] }): JwtUser {
    return { sub: payload.sub, scope: payload.scope ?? '', roles: payload.roles ?? [] };
  }
}
