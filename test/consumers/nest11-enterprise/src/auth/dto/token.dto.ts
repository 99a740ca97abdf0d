import { ApiProperty } from '@nestjs/swagger';

export class TokenDto {
  @ApiProperty({ description: 'A JWT to send as "Authorization: Bearer <token>"' })
  access_token: string;
}

export class ProfileDto {
  @ApiProperty()
  userId: string;

  @ApiProperty()
  username: string;

  @ApiProperty({ type: [String] })
  roles: string[];

  @ApiProperty({ description: 'Space-separated OAuth scopes' })
  scope: string;
}
