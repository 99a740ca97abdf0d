import { Injectable, UnauthorizedException } from '@nestjs/common';
import { JwtService } from '@nestjs/jwt';
import { JwtPayload } from './auth-user';
import { Role } from './roles.decorator';

interface StoredUser {
  id: string;
  username: string;
  password: string;
  roles: Role[];
  scopes: string[];
}

// A stand-in for the users table of a real app.
const USERS: StoredUser[] = [
  { id: 'u-1', username: 'alice', password: 'alice-password', roles: [Role.Admin, Role.Sales], scopes: ['customers:read', 'customers:write', 'orders:read', 'orders:write'] },
  { id: 'u-2', username: 'bob', password: 'bob-password', roles: [Role.Sales], scopes: ['customers:read', 'orders:read'] },
  { id: 'u-3', username: 'carol', password: 'carol-password', roles: [Role.Sales], scopes: ['customers:read', 'customers:write', 'orders:read'] },
];

@Injectable()
export class AuthService {
  constructor(private readonly jwt: JwtService) {}

  async login(username: string, password: string): Promise<{ access_token: string }> {
    const user = USERS.find((u) => u.username === username && u.password === password);
    if (!user) {
      throw new UnauthorizedException('Wrong username or password');
    }
    const payload: JwtPayload = { sub: user.id, username: user.username, roles: user.roles, scope: user.scopes.join(' ') };
    return { access_token: await this.jwt.signAsync(payload) };
  }
}
