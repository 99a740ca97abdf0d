import { Role } from './roles.decorator';

/** What the JWT carries. */
export interface JwtPayload {
  sub: string;
  username: string;
  roles: Role[];
  /** Space-separated OAuth scopes. */
  scope: string;
}

/** The user object the app's guards and controllers read from `request.user`. */
export interface AuthUser {
  userId: string;
  username: string;
  roles: Role[];
  scope: string;
}
